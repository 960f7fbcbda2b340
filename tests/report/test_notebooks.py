"""Every reviewer notebook executes (nbclient, kernel python3) and is stored exactly as generated; one computes its
quick data as a reviewer's run does, the others render the session's stored quick evidence."""
from __future__ import annotations

import importlib.util
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


#: the notebook that computes its own quick data in its test, as a reviewer's run does; the others render the
#: session's stored quick evidence (LNRECENCY_EVIDENCE, the notebooks' setup cell): the same cells, nothing computed
#: twice (the report's tests compute every table and figure these cells show)
COMPUTES = "01_theorem1_layernorm_recency"


@pytest.mark.parametrize("name", NAMES)
def test_notebook_executes(name, quick_evidence_session, monkeypatch):
    if name == COMPUTES:
        monkeypatch.delenv("LNRECENCY_EVIDENCE", raising=False)
    else:
        monkeypatch.setenv("LNRECENCY_EVIDENCE", str(quick_evidence_session))
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    client.execute()  # raises CellExecutionError (the test fails) when any cell fails
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(o.output_type == "display_data" for o in outputs)
