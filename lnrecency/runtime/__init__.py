"""Floor 1, running things safely: argument checks (:mod:`~.arguments`), a call in a child process under time and
memory limits (:mod:`~.child`), wall-clock limits (:mod:`~.timelimit`), available memory (:mod:`~.memory`),
progress lines (:mod:`~.progress`) and tasks in process or on a Dask cluster (:mod:`~.distributed`).
Nothing here knows the model; nothing here imports numpy at import time."""
