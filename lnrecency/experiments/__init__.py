"""Floor 6, experiments built on the theory and the numerics: the authors' figures panel by panel
(:mod:`~.authors`), phase diagrams over settings (:mod:`~.sweep`), the Definition 1 bias profiler
(:mod:`~.profiler`) and the trained decoders (:mod:`~.decoders`, optional extra ``models``)."""
