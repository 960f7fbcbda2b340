"""The study engine (issue 82): every experiment on trained or real models declared once as data
(``declaration.py``, ``declared.py``) and run, decided and read by one loop (``engine.py``)."""
