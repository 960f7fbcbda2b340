"""What each pre-registered plan costs in the repository (issue 82, item 5), measured from its declaration, never
typed: its plan text, its declaration in ``lnrecency/experiments/plans/declared.py`` (the ``Study(...)`` and the
module-level names and functions only it uses), the modules its hooks name (a hook in the shared ``plans/hooks.py``
counts its own function and the functions of that module it calls; a hook module in a plan's own sub-package counts
that whole folder; the engine's runner for plans declared with arms, ``plans/text_arms.py``, is the engine's, not the
plan's), the study modules it was the first plan to import, and its claims' modules with their view modules.
docs/layout.md's table between the plan-cost markers is rendered from :func:`plan_costs`.

Lines are physical lines of the files as committed (blank lines and docstrings included): what a reviewer reads.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PlanCost", "plan_costs", "plan_cost_table", "PLAN_COST_BEGIN", "PLAN_COST_END", "GOAL"]

PLAN_COST_BEGIN, PLAN_COST_END = "<!-- plan-cost:begin -->", "<!-- plan-cost:end -->"
#: issue 82's goal for a plan like v4: files and lines of code beside its plan text
GOAL = (2, 300)
PACKAGE = Path(__file__).resolve().parents[2]
#: modules of the engine a plan's hooks may name without making them its own
ENGINE = ("lnrecency.experiments.plans.text_arms",)


@dataclass(frozen=True)
class PlanCost:
    """One plan's footprint: its text's lines, its declaration's lines, and each code file of its own with its lines
    (a path relative to the repository, ``path:function`` for a function of the shared hooks module)."""

    name: str
    text_lines: int
    declaration_lines: int
    code: tuple  # ((path, lines), ...)

    @property
    def files(self) -> int:
        """Files a new plan of this kind adds or changes: its text, the declarations file and each module of its own
        (a function in the shared hooks module changes that file: counted once)."""
        return 2 + len({p.split(":")[0] for p, _ in self.code})

    @property
    def lines(self) -> int:
        """Lines of code: the declaration's and its own modules'."""
        return self.declaration_lines + sum(n for _, n in self.code)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _rel(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def _declaration_lines(name: str) -> int:
    """The plan's ``Study(...)`` in declared.py and, transitively, the module-level assignments it alone names."""
    src = PACKAGE / "experiments" / "plans" / "declared.py"
    tree = ast.parse(src.read_text(encoding="utf-8"))
    assigned = {t.id: node for node in tree.body if isinstance(node, ast.Assign)  # names, and names unpacked
                for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name)}
    assigned |= {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}  # a helper of one plan
    studies = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "Study"
               and c.args and isinstance(c.args[0], ast.Constant)]

    def names(node) -> set:
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in assigned}

    used_by: dict = {}
    for call in studies:
        seen, todo = set(), names(call)
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo |= names(assigned[n]) - seen
        used_by[call.args[0].value] = seen
    mine = next(c for c in studies if c.args[0].value == name)
    own = {n for n in used_by[name] if sum(n in s for s in used_by.values()) == 1 and n != "STUDIES"}
    nodes = {id(assigned[n]): assigned[n] for n in own}  # a statement assigning several names counts once
    return (mine.end_lineno - mine.lineno + 1) + sum(n.end_lineno - n.lineno + 1 for n in nodes.values())


def _hook_code(study) -> dict:
    """path -> lines of the code its hooks name."""
    out: dict = {}
    hooks_module = "lnrecency.experiments.plans.hooks"
    from lnrecency.experiments.plans.declaration import HOOKS

    for field in HOOKS:
        value = getattr(study, field)
        if not value:
            continue
        module, _, attr = value.partition(":")
        if module in ENGINE:  # the engine's, every plan's (a plan declared with arms names it for its runs)
            continue
        path = PACKAGE.parent / (module.replace(".", "/") + ".py")
        if module == hooks_module:  # the shared module: this hook's function and the module's functions it calls
            tree = ast.parse(path.read_text(encoding="utf-8"))
            fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
            todo, seen = [attr.split(".")[0]], set()
            while todo:
                fn = fns[todo.pop()]
                seen.add(fn.name)
                out[f"{_rel(path)}:{fn.name}"] = fn.end_lineno - fn.lineno + 1
                todo += [c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                         and c.func.id in fns and c.func.id not in seen]
        elif path.parent.name != "studies" and (path.parent / "__init__.py").is_file():  # a plan's own sub-package
            for p in sorted(path.parent.glob("*.py")):
                out[_rel(p)] = _lines(p)
        else:
            out[_rel(path)] = _lines(path)
    return out


STUDIES = PACKAGE / "experiments" / "studies"


def _imported(path: Path) -> set:
    """The study modules (files under experiments/studies/) a module imports, transitively."""
    seen, todo = set(), [path]
    while todo:
        tree = ast.parse(todo.pop().read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([node.module] + [f"{node.module}.{a.name}" for a in node.names]  # from a package, its module
                     if isinstance(node, ast.ImportFrom) and node.module else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("lnrecency.experiments.studies."):
                    f = PACKAGE.parent / (name.replace(".", "/") + ".py")
                    if f.is_file() and f not in seen:
                        seen.add(f)
                        todo.append(f)
    return seen


def _helpers(studies: list) -> dict:
    """Plan name -> the study modules beyond those its hooks name that it is the first plan (in declaration order) to
    import, directly or not: the code it brought (plan v3's path decomposition, plan v2's power at its level); a module
    a later plan reuses stays with the plan that brought it, and no plan's hook module is another's helper."""
    from lnrecency.experiments.plans.declared import STUDIES as DECLARED

    hooked = {s.name: {PACKAGE.parent / p.split(":")[0] for p in _hook_code(s)} for s in DECLARED.values()}
    every_hook = set().union(*hooked.values())  # every study's, the plans' and the others' (the pretrained models')
    out, taken = {}, set()
    shared = PACKAGE / "experiments" / "plans" / "hooks.py"  # its hooks' functions import what their plans' do
    for s in studies:
        reach = set().union(*(_imported(f) for f in hooked[s.name] if f != shared))
        mine = sorted(f for f in reach - taken - every_hook if f.parent == STUDIES)
        taken |= set(mine)
        out[s.name] = mine
    return out


def plan_costs() -> list[PlanCost]:
    """Every declared plan's footprint, in declaration order."""
    from lnrecency.claims.catalog import PLAN_CLAIMS, declared
    from lnrecency.experiments.plans.declared import plans

    out = []
    helpers = _helpers(list(plans()))
    for s in plans():
        code = _hook_code(s)
        code.update((_rel(f), _lines(f)) for f in helpers[s.name])
        for cid in dict.fromkeys(t.claim for t in s.tests):
            module = declared(cid).module
            if module == PLAN_CLAIMS:  # the engine's: every plan's claims declared with its tests (none of its own)
                continue
            for root in (PACKAGE / "claims", PACKAGE / "report" / "views"):
                path = root / (module.replace(".", "/") + ".py")
                if path.is_file():
                    code[_rel(path)] = _lines(path)
        out.append(PlanCost(s.name, _lines(PACKAGE / "data" / s.plan_file), _declaration_lines(s.name),
                            tuple(code.items())))
    return out


#: a plan of v4's kind declared by the recipe alone, run by a test (its arms, stop rule, probes along training and
#: tests with rules; every hook the engine's)
EXAMPLE = ("tests/experiments/test_text_arms.py", "_toy")


def example_lines() -> tuple[int, bool] | None:
    """(lines of :data:`EXAMPLE`'s declaration, whether each of its tests declares its claim: a ``question``), None
    outside a source checkout, where the tests are not shipped."""
    path = PACKAGE.parent / EXAMPLE[0]
    if not path.is_file():
        return None
    fn = next(n for n in ast.parse(path.read_text(encoding="utf-8")).body
              if isinstance(n, ast.FunctionDef) and n.name == EXAMPLE[1])
    tests = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == "PlanTest"]
    asked = bool(tests) and all(any(k.arg == "question" for k in c.keywords) for c in tests)
    return fn.end_lineno - fn.lineno + 1, asked


def plan_cost_table() -> str:
    """docs/layout.md's block: one row per plan, its files and lines, against :data:`GOAL`."""
    rows = ["| plan | plan text (lines) | files (text included) | lines of code | of which the declaration | "
            "own modules (lines) |",
            "|---|---|---|---|---|---|"]
    for c in plan_costs():
        mods = ", ".join(f"{p.removeprefix('lnrecency/')} {n}" for p, n in c.code)
        rows.append(f"| {c.name} | {c.text_lines} | {c.files} | {c.lines} | {c.declaration_lines} | {mods} |")
    files, lines = GOAL
    return (f"{PLAN_COST_BEGIN}\n"
            f"Measured by `lnrecency.report.words.plan_cost` from each plan's declaration. Files: its text, "
            f"declared.py and each module of its own: those its hooks name, the study modules it was the first plan to "
            f"import, its claims' modules and their views. Not counted: the report's code for it (plans v2's and v3's "
            f"page renderer, plan v2's power at its level), what it reuses from an earlier plan (plans v4 and v5 read "
            f"slopes with `v3_paths.layer2_slopes`, moved there from plan v4's removed module and counted under plan "
            f"v3; plan v5's numbers use plan v4's power), the engine's runner (`plans/text_arms.py`, which plans v4 "
            f"and v5 run on, plan v4's stream and row among its options) and the engine's claims (`claims/trained/"
            f"plan_claims.py`, which decides the claims a plan declares with its tests). Lines: physical lines, "
            f"docstrings and blank lines included. Issue 82's "
            f"goal for a plan like v4 is at most {files} files (its text and its declaration) and {lines} lines.\n\n"
            + "\n".join(rows) + _example() + f"\n{PLAN_COST_END}")


def _example() -> str:
    got = example_lines()
    if got is None:
        return ""
    n, asked = got
    files = ("its text", "declared.py") if asked else ("its text", "declared.py", "catalog.py", "its claim module")
    claims = ("its claims are derived by `catalog.plan_declared` and evaluated by `claims/trained/plan_claims.py` (the "
              "test patches them into the catalogue: its IDs are the tests' placeholders)" if asked else
              "its claims still need their catalogue entries and a claim module")
    return (f"\n\nA toy plan of v4's kind (`{EXAMPLE[0]}`'s `{EXAMPLE[1]}`: an arm with an imposed share against a "
            f"boundary, two arms trained to a target loss against each other, one probed along training; three tests "
            f"with rules; every hook the engine's; it reuses plan v4's text and declares no readings, pin, families or "
            f"power) takes {n} lines of declaration. The engine's runner trains and snapshots it (quick preset, a toy "
            f"corpus) and {claims}. A real plan adds its own text, with its readings and pin in the same declaration: "
            f"{len(files)} hand-written files ({', '.join(files)}) against the goal's {GOAL[0]}, no module of its "
            f"own, then the generated docs (`python3 -m lnrecency.report.regenerate`, "
            f"`python3 -m lnrecency.cli.reference`). "
            f"Such a plan has no view, no place in the answer and no re-derivation from published rows unless it adds "
            f"them.")
