"""The import graph: no cycle (module-level and function-level imports alike) and at most one arrow from a
lower floor to a higher one (README, "Repository layout"). A planted back-edge is detected by the same code."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALIAS = {"theory": "lnrecency.theory", "numerics": "lnrecency.numerics"}
EXPERIMENTS = ("lnrecency.reproduce", "lnrecency.sweep", "lnrecency.bias")
MIDDLE = ("lnrecency.stats", "lnrecency.distributed", "lnrecency.conventions")


def modules() -> dict[str, Path]:
    out = {}
    for top in ("lnrecency", "theory", "numerics"):
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join((ALIAS.get(parts[0], parts[0]),) + parts[1:])
            out[name.removesuffix(".__init__")] = path
    return out


def floor(m: str) -> int:
    if m.startswith("lnrecency.commands") or m in ("lnrecency.cli", "lnrecency.__main__"):
        return 6
    if m.startswith("lnrecency.report"):
        return 5
    if m.startswith("lnrecency.claims"):
        return 4
    if m.startswith("lnrecency.models") or m in EXPERIMENTS:
        return 3
    if m.startswith(("lnrecency.theory", "lnrecency.numerics")) or m in MIDDLE:
        return 2
    return 1


def edges(mods: dict[str, Path]) -> set[tuple[str, str]]:
    out = set()
    for name, path in mods.items():
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


def test_no_import_cycle_and_at_most_one_arrow_up():
    mods = modules()
    graph = edges(mods)
    assert len(mods) > 50 and len(graph) > 100  # the scan sees the project
    assert cycles(mods, graph) == []
    up = sorted((a, b) for a, b in graph if floor(b) > floor(a))
    assert len(up) <= 1, up


def test_a_planted_cycle_is_found():
    mods = modules()
    graph = edges(mods) | {("lnrecency.layers", "lnrecency.report.build")}  # a layer importing the report
    found = cycles(mods, graph)
    assert any("lnrecency.layers" in c and "lnrecency.report.build" in c for c in found)
