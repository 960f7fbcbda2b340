"""Claims decided on decoders trained here and on real pretrained models (they read the cached experiments of
:mod:`lnrecency.experiments.studies`): TM1-TM5, S2.0-S3.3, TT1-TT4, TV1-TV6, R1."""
