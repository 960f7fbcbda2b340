"""Every reviewer notebook executes (nbclient, kernel python3) and is stored exactly as generated; one computes its
quick data as a reviewer's run does, in a kernel of its own; the others render the session's stored quick evidence in
one kernel, reset to an empty namespace before each."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 120  # seconds per cell


def _generator():
    spec = importlib.util.spec_from_file_location("make_notebooks", NOTEBOOKS / "make_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
NAMES = sorted(GEN.NOTEBOOKS)


def test_every_generated_notebook_is_stored_without_outputs():
    stored = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert stored == NAMES, "run: python3 notebooks/make_notebooks.py"
    for name in NAMES:
        text = (NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8")
        assert text == GEN.render(name), f"{name}.ipynb is out of date: run notebooks/make_notebooks.py"
        nb = nbformat.reads(text, as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None
                   for c in nb.cells if c.cell_type == "code")


#: the notebook that computes its own quick data in its test, as a reviewer's run does, in a kernel of its own; the
#: others render the session's stored quick evidence (LNRECENCY_EVIDENCE, the notebooks' setup cell): the same cells,
#: nothing computed twice (the report's tests compute every table and figure these cells show)
COMPUTES = "01_theorem1_layernorm_recency"
#: run in every kernel before a notebook that shares it: an empty namespace and no figure left open (what a
#: notebook may read is what its own cells define, as in a fresh kernel; modules stay imported)
RESET = "%reset -f\nimport matplotlib.pyplot as _plt\n_plt.close('all')\ndel _plt"


@pytest.fixture(scope="module")
def evidence_kernel(quick_evidence_session):
    """One python3 kernel for the notebooks that render the stored evidence (started with LNRECENCY_EVIDENCE
    naming it), reset before each: each notebook is still run whole, in order, from an empty namespace, and the
    kernel's start and its imports (about 5 s) are paid once instead of nine times."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(ROOT), env={**os.environ, "LNRECENCY_EVIDENCE": str(quick_evidence_session)})
    try:
        yield km
    finally:
        km.shutdown_kernel(now=True)


def _reset(km) -> None:
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=CELL_TIMEOUT)
        reply = kc.execute_interactive(RESET, timeout=CELL_TIMEOUT, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()


@pytest.mark.slow  # a kernel and a notebook's figures; the evidence ones read the session's quick evidence
@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes(name, request, monkeypatch):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    if name == COMPUTES:
        monkeypatch.delenv("LNRECENCY_EVIDENCE", raising=False)
        client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": str(ROOT)}})
    else:
        km = request.getfixturevalue("evidence_kernel")
        _reset(km)
        client = NotebookClient(nb, km=km, timeout=CELL_TIMEOUT, kernel_name="python3",
                                resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError (the test fails) when any cell fails
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(o.output_type == "display_data" for o in outputs)


def test_a_shared_kernel_starts_each_notebook_from_an_empty_namespace(evidence_kernel):
    """The reset is what makes sharing the kernel safe: a name a previous notebook defined is gone, so a notebook
    that reads a name it does not define fails here as it would in a fresh kernel."""
    kc = evidence_kernel.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=CELL_TIMEOUT)
        kc.execute_interactive("leaked = 1", timeout=CELL_TIMEOUT, output_hook=lambda msg: None)
    finally:
        kc.stop_channels()
    _reset(evidence_kernel)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(leaked)")])
    client = NotebookClient(nb, km=evidence_kernel, timeout=CELL_TIMEOUT, kernel_name="python3")
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError, match="NameError"):
        client.execute()
