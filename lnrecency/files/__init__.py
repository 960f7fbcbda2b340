"""Floor 2, files: atomic files and output folders published by a manifest (:mod:`~.atomic`), the evidence store's
codec (:mod:`~.store`: JSON + npz, no pickle, no eval, old record names read through a rename table), validated
readers of JSON and text inputs (:mod:`~.readers`), and the records every table and figure is written from
(:mod:`~.table_record`, :mod:`~.figure_record`)."""
