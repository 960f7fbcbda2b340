"""The import graph: no cycle (module-level and function-level imports alike) and no arrow from a lower floor to a
higher one (docs/layout.md). A planted back-edge is detected by the same code."""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALIAS = {"theory": "lnrecency.theory", "numerics": "lnrecency.numerics"}
#: The floors, bottom to top, keyed by sub-package: a module may import its own floor and the floors below,
#: never one above. docs/layout.md describes the same table (test_layout_describes_the_tree).
FLOORS: dict[str, int] = {
    "lnrecency.choices": 1,      # the names the command line offers (no numpy: `lnrecency --help` is instant)
    "lnrecency.runtime": 1,      # argument checks, children under limits, time and memory, progress, workers
    "lnrecency.files": 2,        # atomic output folders, the evidence store, validated readers, table/figure records
    "lnrecency.model": 3,        # ModelConfig, the layers and their arithmetic, the authors' presets
    "lnrecency": 10,             # the package face: re-exports ModelConfig and (on first use) probe_model
    "lnrecency.inference": 4,    # estimates and checks, the false-alarm budget, seed tests, evidence, verdicts
    "lnrecency.theory": 5,       # the exact limit, the finite-width theory, closed forms, proofs
    "lnrecency.numerics": 5,     # finite-width Monte Carlo
    "lnrecency.experiments": 6,  # the authors' figures, sweeps, the Definition 1 profiler, trained decoders
    "lnrecency.claims": 7,       # one module per claim, named by its ID
    "lnrecency.report": 8,       # the report pipeline, its own tables and figures, the README block
    "lnrecency.cli": 9,          # the `lnrecency` command and its subcommands
}


def modules() -> dict[str, Path]:
    out = {}
    for top in ("lnrecency", "theory", "numerics"):
        for path in [*(ROOT / top).rglob("*.py"), *(ROOT / top).rglob("*.c")]:  # .c: compiled modules (leaves)
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join((ALIAS.get(parts[0], parts[0]),) + parts[1:])
            out[name.removesuffix(".__init__")] = path
    return out


def floor(m: str) -> int:
    """The floor of module ``m``: that of the longest key of :data:`FLOORS` that is ``m`` or a package above it."""
    keys = [k for k in FLOORS if m == k or m.startswith(k + ".")]
    if not keys:
        raise KeyError(f"{m} is in no floor: add its sub-package to FLOORS")
    return FLOORS[max(keys, key=len)]


def edges(mods: dict[str, Path]) -> set[tuple[str, str]]:
    out = set()
    for name, path in mods.items():
        if path.suffix != ".py":  # a compiled module imports nothing of the project
            continue
        pkg = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                for head, new in ALIAS.items():
                    if base == head or base.startswith(head + "."):
                        base = new + base[len(head):]
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in names:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != name:
                    out.add((name, t))
    return out


def cycles(nodes, graph: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    adj: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in graph:
        adj[a].append(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def test_every_module_has_a_floor():
    unplaced = []
    for m in modules():
        try:
            floor(m)
        except KeyError:
            unplaced.append(m)
    assert unplaced == []


def test_no_import_cycle_and_no_arrow_up():
    mods = modules()
    graph = edges(mods)
    assert len(mods) > 50 and len(graph) > 100  # the scan sees the project
    assert cycles(mods, graph) == []
    up = sorted((a, b) for a, b in graph if floor(b) > floor(a))
    assert up == []


def test_a_planted_arrow_up_is_found():
    """The same scan flags a layer importing the report (an arrow up), and only that one."""
    graph = edges(modules()) | {("lnrecency.model.layers", "lnrecency.report.build")}
    up = sorted((a, b) for a, b in graph if floor(b) > floor(a))
    assert up == [("lnrecency.model.layers", "lnrecency.report.build")]
    assert floor("lnrecency.runtime.child") == 1 and floor("lnrecency.cli.commands.verify") == 9


def test_a_planted_cycle_is_found():
    mods = modules()
    graph = edges(mods) | {("lnrecency.model.layers", "lnrecency.report.build")}  # a layer importing the report
    found = cycles(mods, graph)
    assert any("lnrecency.model.layers" in c and "lnrecency.report.build" in c for c in found)


# ---- the tree, as docs/layout.md describes it ----------------------------------------------------------------
LAYOUT = ROOT / "docs" / "layout.md"
#: modules allowed over MAX_LINES, each with the reason it stays whole
LONG_MODULES: dict[str, str] = {
    "lnrecency/claims/catalog.py": "the catalogue: every claim declared once, in one list, by design (define once)",
}
#: the size budgets' one written place (pyproject.toml; docs/layout.md, "Size budgets")
BUDGETS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["lnrecency"]["size-budgets"]
MAX_LINES = BUDGETS["module-lines"]


def _layout_rows() -> dict[str, int]:
    """``| floor | `path` | ...`` rows of docs/layout.md: path -> floor."""
    rows = {}
    for line in LAYOUT.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*`([^`]+)`", line)
        if m:
            rows[m.group(2).rstrip("/")] = int(m.group(1))
    return rows


def _as_module(path: str) -> str:
    parts = Path(path).with_suffix("").parts if path.endswith(".py") else Path(path).parts
    return ".".join((ALIAS.get(parts[0], parts[0]),) + parts[1:])


def test_layout_names_every_floor_with_the_floor_of_the_table():
    got = {_as_module(p): f for p, f in _layout_rows().items()}
    for key, level in FLOORS.items():
        if key != "lnrecency":  # the package face: no folder of its own
            assert got.get(key) == level, (key, got.get(key), level)
    assert set(got) <= set(FLOORS), set(got) - set(FLOORS)


#: the folders whose modules the claim catalogue lists (lnrecency/claims/catalog.py), not docs/layout.md: a new
#: claim is its module, its views' module (named alike) and one catalogue line, nothing more
#: (test_claim_folders_hold_catalogue_modules_only)
CLAIM_FOLDERS = ("lnrecency/claims/parameter_free", "lnrecency/claims/trained",
                 "lnrecency/report/views/parameter_free", "lnrecency/report/views/trained")


def stray_claim_modules(root: Path = ROOT, listed: tuple[str, ...] | None = None) -> list[str]:
    """Modules in :data:`CLAIM_FOLDERS` that the catalogue does not list (a module there is a claim's; the one that
    decides the claims plans declare with their tests, catalog.PLAN_CLAIMS, is listed whether a plan uses it or not)."""
    from lnrecency.claims import catalog

    listed = catalog.modules() + (catalog.PLAN_CLAIMS,) if listed is None else listed
    out = []
    for folder in CLAIM_FOLDERS:
        for path in sorted((root / folder).glob("*.py")):
            sub = f"{Path(folder).name}.{path.stem}"
            if path.name != "__init__.py" and sub not in listed:
                out.append(sub)
    return out


def test_claim_folders_hold_catalogue_modules_only(tmp_path):
    assert stray_claim_modules() == []
    for folder in CLAIM_FOLDERS:
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / CLAIM_FOLDERS[0] / "c3_residual.py").write_text("")
    (tmp_path / CLAIM_FOLDERS[0] / "x1_stray.py").write_text("")
    (tmp_path / CLAIM_FOLDERS[3] / "c3_residual_evaluation.py").write_text("")  # a helper is a stray too
    assert stray_claim_modules(tmp_path) == ["parameter_free.x1_stray", "trained.c3_residual_evaluation"]


def claim_floor_problems(root: Path = ROOT) -> list[str]:
    """What the claims floor must not do (issue 66): draw (import matplotlib) or import another claim's module (a
    module of :data:`CLAIM_FOLDERS` under lnrecency/claims, imported from anywhere in lnrecency/claims but itself)."""
    out = []
    claim_modules = {f"lnrecency.claims.{Path(f).name}.{p.stem}" for f in CLAIM_FOLDERS[:2]
                     for p in (root / f).glob("*.py") if p.name != "__init__.py"}
    for path in sorted((root / "lnrecency" / "claims").rglob("*.py")):
        me = ".".join(path.relative_to(root).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if isinstance(node, ast.ImportFrom) and node.module in ("lnrecency.claims.parameter_free",
                                                                    "lnrecency.claims.trained"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                if name.split(".")[0] == "matplotlib":
                    out.append(f"{me} imports {name}")
                elif name in claim_modules and name != me:
                    out.append(f"{me} imports {name}")
    return out


def test_no_claim_module_draws_or_imports_another_claim(tmp_path):
    assert claim_floor_problems() == []
    for folder in ("lnrecency/claims/parameter_free", "lnrecency/claims/trained"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "lnrecency/claims/parameter_free/c2_x.py").write_text(
        "from lnrecency.claims.parameter_free.t1_y import heatmap\n")
    (tmp_path / "lnrecency/claims/parameter_free/t1_y.py").write_text("import matplotlib.pyplot as plt\n")
    (tmp_path / "lnrecency/claims/trained/tt1_z.py").write_text(
        "def f():\n    from lnrecency.claims.parameter_free import t1_y\n")
    assert claim_floor_problems(tmp_path) == [
        "lnrecency.claims.parameter_free.c2_x imports lnrecency.claims.parameter_free.t1_y",
        "lnrecency.claims.parameter_free.t1_y imports matplotlib.pyplot",
        "lnrecency.claims.trained.tt1_z imports lnrecency.claims.parameter_free.t1_y"]


def test_layout_names_every_module_and_nothing_else():
    text = LAYOUT.read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/]+\.(?:py|c))`", text))
    tree, every = set(), set()
    for top in ("lnrecency", "theory", "numerics"):
        for path in [*(ROOT / top).rglob("*.py"), *(ROOT / top).rglob("*.c")]:  # .c: compiled modules (leaves)
            if path.name != "__init__.py":
                every.add(path.name)
                if str(path.parent.relative_to(ROOT)) not in CLAIM_FOLDERS:  # the catalogue lists those
                    tree.add(path.name)
    missing = sorted(n for n in tree if n not in {Path(x).name for x in named})
    assert missing == [], f"docs/layout.md does not name {missing}"
    ghosts = sorted(x for x in named if Path(x).name not in every and not (ROOT / x).exists())
    assert ghosts == [], f"docs/layout.md names files that do not exist: {ghosts}"
    for sub in sorted(p.name for p in (ROOT / "lnrecency").iterdir() if (p / "__init__.py").exists()):
        assert f"lnrecency/{sub}/" in text, sub


def test_the_package_root_holds_few_modules():
    flat = sorted(p.name for p in (ROOT / "lnrecency").glob("*.py"))
    assert len(flat) <= 8, flat


def test_no_module_is_longer_than_the_limit_without_a_reason():
    long = {}
    for top in ("lnrecency", "theory", "numerics"):
        for path in [*(ROOT / top).rglob("*.py"), *(ROOT / top).rglob("*.c")]:  # .c: compiled modules (leaves)
            n = len(path.read_text(encoding="utf-8").splitlines())
            rel = str(path.relative_to(ROOT))
            if n > MAX_LINES and rel not in LONG_MODULES:
                long[rel] = n
    assert long == {}, long


def test_claim_modules_are_named_by_the_ids_they_declare():
    """The ID rule lives in the catalogue (lnrecency.claims.catalog.ID_RULE, module_covers), checked when a claim is
    declared; here every registered claim is checked once more by the same function. A claim a plan declares with
    its tests has no module of its own: the engine's (catalog.PLAN_CLAIMS) decides it, whatever its ID."""
    from lnrecency.claims.catalog import PLAN_CLAIMS, module_covers, plan_declared
    from lnrecency.claims.registry import CATALOG
    from lnrecency.experiments.plans.declared import STUDIES

    from_plans = {d.id for d in plan_declared(STUDIES.values())}
    for claim in CATALOG:
        if claim.id in from_plans:
            assert claim.module.endswith(PLAN_CLAIMS), (claim.id, claim.module)
        else:
            assert module_covers(claim.module, claim.id), (claim.id, claim.module)


def test_the_naming_rule_can_say_no():
    from lnrecency.claims.catalog import S as Statement
    from lnrecency.claims.catalog import declare, id_parts, module_covers

    assert module_covers("p1_p7_printed_formulas", "P3") and not module_covers("p1_p7_printed_formulas", "P8")
    assert module_covers("s2_0_premise", "S2.0") and not module_covers("s2_0_premise", "S2.1")
    assert module_covers("s2_s3_seed_experiments", "S3.2") and not module_covers("s2_s3_seed_experiments", "TM1")
    assert not module_covers("deeper", "C6") and module_covers("c6_deeper_layers", "C6")
    assert not module_covers("c6_deeper_layers", "C7")
    with pytest.raises(ValueError, match="claim id must be"):
        id_parts("C3X")
    assert not module_covers("parameter_free.c3_residual", "C10")  # refused when the registry loads the catalogue
    assert module_covers("parameter_free.c10_new_claim", "C10")  # the name is right, the module is not there:
    with pytest.raises(ValueError, match="c10_new_claim.py' is missing"):
        declare("C10", "parameter_free.c10_new_claim", "a title", Statement("s", "ours", "A statement."))


# ---- rules of the house that the import scan alone does not show ---------------------------------------------
#: the most modules (``.py`` files, ``__init__.py`` included) one folder of the package holds
MAX_MODULES_PER_FOLDER = BUDGETS["modules-per-folder"]
COMMANDS = "lnrecency.cli.commands"


def _is_command(m: str) -> bool:
    return m.startswith(COMMANDS + ".") and not (ROOT / (m.replace(".", "/") + "/__init__.py")).exists()


def command_imports(graph: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """(command, command) edges: a subcommand's module importing another's (layout.md: never)."""
    return sorted((a, b) for a, b in graph if _is_command(a) and _is_command(b))


def test_no_command_imports_another():
    assert command_imports(edges(modules())) == []


def test_a_planted_command_import_is_found():
    graph = edges(modules()) | {("lnrecency.cli.commands.decoders.train", "lnrecency.cli.commands.verify")}
    assert command_imports(graph) == [("lnrecency.cli.commands.decoders.train", "lnrecency.cli.commands.verify")]


def crowded(root: Path = ROOT) -> dict[str, int]:
    """Folders of the package holding more than :data:`MAX_MODULES_PER_FOLDER` modules."""
    out = {}
    for top in ("lnrecency", "theory", "numerics"):
        for folder in [root / top, *(p for p in (root / top).rglob("*") if p.is_dir())]:
            n = len(list(folder.glob("*.py")))
            if n > MAX_MODULES_PER_FOLDER:
                out[str(folder.relative_to(root))] = n
    return out


def test_no_folder_is_crowded(tmp_path):
    assert crowded() == {}
    planted = tmp_path / "lnrecency" / "room"
    planted.mkdir(parents=True)
    for k in range(MAX_MODULES_PER_FOLDER + 1):
        (planted / f"m{k}.py").write_text("")
    (tmp_path / "theory").mkdir()
    (tmp_path / "numerics").mkdir()
    assert crowded(tmp_path) == {"lnrecency/room": MAX_MODULES_PER_FOLDER + 1}


def definitions(name: str) -> list[str]:
    """Where a top-level function ``name`` is defined in the package (module paths)."""
    out = []
    for top in ("lnrecency", "theory", "numerics"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and node.name == name:
                    out.append(str(path.relative_to(ROOT)))
    return sorted(out)


def test_defined_once():
    """Holm's procedure, the run cache's reader and writer, the cache root: one definition each."""
    assert definitions("holm") == ["lnrecency/inference/seed_tests.py"]
    assert definitions("cache_root") == ["lnrecency/experiments/run_cache.py"]
    assert definitions("cached_jobs") == ["lnrecency/experiments/run_cache.py"]
    # the scan finds a second definition when there is one (both `run` of two commands)
    assert len(definitions("run")) >= 2


def test_every_package_folder_is_installed():
    """A wheel holds only the packages pyproject.toml lists: every folder of Python modules under lnrecency/ (and
    theory/, numerics/) must be there, or a non-editable install misses it."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    folders = {".".join(p.relative_to(ROOT).parts) for p in (ROOT / "lnrecency").rglob("*")
               if p.is_dir() and any(p.glob("*.py"))} | {"lnrecency"}
    assert folders - listed == set()
