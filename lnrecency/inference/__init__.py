"""Floor 4, statistical inference and its records. :mod:`~.stats` is the public face (grouped re-exports) over
:mod:`~.estimates` (an estimate with its SE, intervals), :mod:`~.checks` (calibrated mean and ordering checks),
:mod:`~.budget` (the suite's false-alarm budget, family-wise k), :mod:`~.edgeworth` (tail corrections) and
:mod:`~.seed_tests` (tests over training seeds, Holm, power by the noncentral t). :mod:`~.evidence` holds the
typed evidence records, the Setting record and the one NotRun; :mod:`~.verdicts` the ClaimResult."""
