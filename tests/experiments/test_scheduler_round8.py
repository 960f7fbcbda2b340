"""The Dask scheduler, round 8 (issue 86, item 3): a dead address is refused before any data work, in seconds; a task
that returns no result names why (not "NoneType: None"). Loopback addresses only."""
from __future__ import annotations

import socket
import time

import pytest

from lnrecency.cli.app import main
from lnrecency.experiments.decoders.parallel import _failure, check_reachable


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_address_is_refused_before_any_data_work(capsys):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    t0 = time.perf_counter()
    assert main(["experiments", "thesis-text", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert time.perf_counter() - t0 < 5 and f"nothing answers at '{address}'" in err and len(err.splitlines()) == 1


def test_a_listening_address_passes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        check_reachable(f"tcp://127.0.0.1:{s.getsockname()[1]}")
    check_reachable("local")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1", "tcp://127.0.0.1:0", "tcp://:8786"])
def test_an_address_without_a_port_is_refused(address):
    with pytest.raises(ValueError, match="tcp://HOST:PORT with a port"):
        check_reachable(address)


class _Future:
    def __init__(self, status, exc=None):
        self.status, self._exc = status, exc

    def exception(self, timeout=None):
        return self._exc


def test_a_task_without_a_result_says_why():
    lost = _failure(_Future("lost"), "tcp://127.0.0.1:8786")
    assert isinstance(lost, ConnectionError) and "the task was lost" in str(lost) and "scheduler" in str(lost)
    assert isinstance(_failure(_Future("error", None), "x"), ConnectionError)  # an error with nothing to give
    own = ValueError("its own")
    assert _failure(_Future("error", own), "x") is own
