"""A notebook cell's code from the function that declares it: the function's body, preceded by the imports of the
names it reads from its module (so the notebooks stay in step with the code they show), or the display of a
claim's own table or figure."""
from __future__ import annotations

import ast
import builtins
import inspect
import sys
import textwrap
import types
from typing import Callable

from lnrecency.report.views.outputs import FigureOutput, TableOutput


def _imports_for(fn: types.FunctionType, tree: ast.FunctionDef) -> list[str]:
    """Import lines for the global names the cell's body reads, each from where the object is defined (the
    module's own global name when it is not a module-level object of its defining module)."""
    params = {a.arg for a in tree.args.args + tree.args.kwonlyargs}
    assigned = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assigned |= {a.asname or a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names}  # the cell's own imports
    used = dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load))
    lines = []
    for name in used:
        if name in params or name in assigned or hasattr(builtins, name):
            continue
        if name not in fn.__globals__:
            raise NameError(f"notebook cell {fn.__qualname__} reads {name!r}, which its module does not define")
        obj = fn.__globals__[name]
        if isinstance(obj, types.ModuleType):
            parent, _, leaf = obj.__name__.rpartition(".")
            lines.append(f"from {parent} import {leaf}" if parent and leaf == name else
                         f"import {obj.__name__}" + ("" if obj.__name__ == name else f" as {name}"))
            continue
        home = getattr(obj, "__module__", None)
        own = getattr(obj, "__name__", None)
        if home and own == name and getattr(sys.modules.get(home), name, None) is obj:
            lines.append(f"from {home} import {name}")
        else:
            lines.append(f"from {fn.__module__} import {name}")
    return sorted(set(lines))


def _output_cell(out: TableOutput | FigureOutput) -> str:
    """A report output shown in a notebook: its builder called on the notebook's ``data``."""
    fn = out.build
    if getattr(sys.modules.get(fn.__module__), fn.__name__, None) is not fn:
        raise TypeError(f"a notebook cell's builder must be a module-level function; got {fn!r}")
    head = f"from {fn.__module__} import {fn.__name__}\n"
    if isinstance(out, TableOutput):
        return head + f"display({fn.__name__}(data))"
    return ("from lnrecency.report.views.shared import show_figures\n" + head
            + f"show_figures(display, *{fn.__name__}(data))")


def cell_source(fn: Callable | TableOutput | FigureOutput) -> str:
    """The notebook code of a cell function: the imports of the global names its body reads, then its body
    (dedented; a leading docstring dropped). Its parameters (``data``, ``display``) are the notebook's own
    names, set by the notebook's first cell. A report output becomes its builder shown on ``data``."""
    if isinstance(fn, (TableOutput, FigureOutput)):
        return _output_cell(fn)
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src).body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise TypeError(f"a code cell must be a function; got {fn!r}")
    body = tree.body[1:] if (isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
                             and isinstance(tree.body[0].value.value, str)) else tree.body
    lines = src.splitlines()
    code = textwrap.dedent("\n".join(lines[body[0].lineno - 1:tree.end_lineno]))
    imports = _imports_for(fn, tree)
    return "\n".join(imports) + ("\n" if imports else "") + code
