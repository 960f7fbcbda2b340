"""Floor 6, experiments built on the theory and the numerics: the authors' figures panel by panel
(:mod:`~.authors`), phase diagrams over settings (:mod:`~.sweep`), the Definition 1 bias profiler
(:mod:`~.profiler`), the one cache of the experiments' runs (:mod:`~.run_cache`), and, on trained and real decoders
(optional extras ``models`` and ``hf``): our decoders (:mod:`~.decoders`), local text (:mod:`~.text`), the probe
(:mod:`~.probes`) and the experiments' designs and runs (:mod:`~.studies`)."""
