"""The one small grammar of the report's plain words (issue 75): a verdict row's cell rendered from its typed
qualifiers (:class:`lnrecency.inference.qualifiers.Qualifiers`) and its claim's declared question, never from the
prose of its finding. A cell says where the row holds and where not, with sizes and units, its reason when it is not
decided and its strongest counter-row; it is at most :data:`PLAIN_WORDS` words, whole (tests/report/test_plain.py
checks every row of docs/verdicts.json: the fields are written to fit, nothing is cut here).
"""
from __future__ import annotations

from lnrecency.inference.qualifiers import FAMILY_REASONS, REASONS, Qualifiers

__all__ = ["PLAIN_WORDS", "VERB", "number", "interval", "cell", "short", "split_cell", "words", "scope_of"]

#: the longest plain cell, in words (20 until issue 84 asked each cell to say when its decision was made by a hair and
#: to carry its counter-row: up to four more words on the rows that need them, and room for a split cell's second row;
#: 24 until the same issue asked a cell to say that its interval is unadjusted where the family left the test
#: undecided, why (the pair rule, Holm's stop), and its counter-row's interval and opposite sign: up to five more
#: words; 30 until an undecided test's cell said which way its one-sided tests lean, "leaning for / against it", three
#: more words, which brought TV3's cell to 32; 34 until a row of several settings said in which of them its decision
#: was by a hair, "at d = 64, no residual", five more words, which brought C5's RP cell to 36; a cap with headroom
#: rather than other words squeezed out)
PLAIN_WORDS = 40


def number(x: float, signed: bool = False) -> str:
    """A number as a cell prints it: 3 significant digits, trailing zeros kept (4 decimals for values below 0.1 in
    size), '+' when ``signed``."""
    if x == 0:
        return "0"
    body = f"{x:+.4f}" if abs(x) < 0.1 and abs(x) >= 1e-4 else f"{x:+#.3g}".rstrip(".")
    return body if signed else body.lstrip("+")


def interval(low: float | None, high: float | None, signed: bool = True) -> str:
    """'[-0.0035, -0.0003]' ('' without an interval)."""
    if low is None:
        return ""
    return f"[{number(low, signed)}, {number(high, signed)}]"


def words(text: str) -> int:
    return len(text.split())


def _signed(q: Qualifiers) -> bool:
    """A difference or a slope is printed with its sign; a probability or a ratio without."""
    return bool(q.comparison) or bool(q.unit) or "slope" in q.quantity or (q.estimate is not None and q.estimate < 0) \
        or (q.low is not None and q.low < 0)


def _size(q: Qualifiers) -> str:
    """'LayerNorm minus none -0.0019 [-0.0035, -0.0003] logit per key'."""
    if q.estimate is None and q.low is None:
        return ""
    what = q.comparison or q.quantity
    est = number(q.estimate, _signed(q)) if q.estimate is not None else ""
    bracket = interval(q.low, q.high, _signed(q))
    text = " ".join(x for x in (what, est, bracket, q.unit) if x)
    if bracket and q.reason in FAMILY_REASONS:  # significant alone, undecided in its family: its own interval
        text += ", unadjusted"
    return text


def cell(verdict: str, q: Qualifiers, question: str) -> str:
    """The plain words of one row: its scope (``where``), then what holds and what fails (with the largest
    violation of an exact decision), its size, the reason it is not decided, the published values beside ours
    and its strongest counter-row; the claim's declared ``question`` when the row has no qualifier at all."""
    parts = []
    if verdict == "secondary":
        parts.append(f"interval {q.side} 0" + (f": {_size(q)}" if _size(q) else "") if q.side else _size(q))
    else:
        if q.reason:  # a decision a small change of the data would have turned says so (qualifiers.by_a_hair)
            # an undecided test that a one-sided test alone would have decided says which way (answer.py says so too)
            parts.append(REASONS[q.reason] + (", by a hair" if q.by_a_hair else "")
                         + (f", leaning {q.leans} it" if q.leans and q.reason in FAMILY_REASONS else ""))
        elif q.by_a_hair:
            parts.append("decided by a hair" + (f" at {q.hair_at}" if q.hair_at else ""))
        if q.holds:
            parts.append(f"holds {q.holds}")
        if q.fails:
            parts.append(f"fails {q.fails}")
        if q.margin is not None:  # an exact decision's size: the largest violation, or the smallest slack
            # "at most" for an exact decision's largest violation; a margin read on sampled rows bounds nothing
            bare = q.margin_of.startswith("smallest") or "sampled" in q.margin_of
            parts.append(f"{q.margin_of or 'margin'}{'' if bare else ' at most'} {q.margin:.3g}")
        if _size(q):
            parts.append(_size(q))
    if q.theirs and q.estimate is not None:
        theirs = ", ".join(number(x, True) for x in q.theirs)
        parts.append(f"{'direction only: ' if q.direction_only else ''}published {theirs}")
    if q.counter is not None:
        parts.append(_counter(q))
    body = "; ".join(p for p in parts if p)
    if not body and q.settings:
        body = VERB[verdict] + (f" in {'all ' * (verdict in ('confirmed', 'reproduced'))}{q.settings} settings"
                                f"{' tried' * (verdict in ('confirmed', 'reproduced'))}" if q.settings > 1 else "")
    if q.where:
        body = f"{q.where}: {body}" if body else q.where
    return body or question


def _counter(q: Qualifiers) -> str:
    """A row's counter-row in its cell: its label, estimate and interval beside ours, and "the opposite sign" when its
    interval excludes 0 on the other side of ours; a ratio as "5.7x"."""
    c = q.counter
    if c.ratio:
        return f"{c.label}: {c.estimate:.2g}x"
    signed = _signed(q) or c.estimate < 0 or (c.low is not None and c.low < 0)
    text = " ".join(x for x in (f"{c.label}: {number(c.estimate, signed)}", interval(c.low, c.high, signed)) if x)
    ours = q.side if q.low is not None else ("above" if (q.estimate or 0) > 0 else "below" if (q.estimate or 0) < 0
                                             else "")
    theirs = "" if c.low is None else "above" if c.low > 0 else "below" if c.high < 0 else ""
    return text + (", the opposite sign" if {ours, theirs} == {"above", "below"} and not c.other else "")


#: a verdict as the verb of a cell that has only its settings to say
VERB = {"confirmed": "holds", "reproduced": "holds", "refuted": "fails", "the opposite shown": "fails",
        "inconclusive": "undecided", "secondary": "an interval"}


def short(verdict: str, q: Qualifiers) -> str:
    """A row in a few words, for a split cell's other verdicts: '{where}, {what it compares}: {verdict}'."""
    where = ", ".join(x for x in (q.where, q.comparison) if x)
    return f"{where}: {verdict}" if where else verdict


def split_cell(rows: list[tuple[str, Qualifiers]], question: str) -> str:
    """A claim's cell from one representative row per verdict, the gravest first: each row's whole cell while the
    cell stays within :data:`PLAIN_WORDS` words, else its short form, else left to the label's count."""
    from dataclasses import replace

    out: list[str] = []
    for k, (verdict, q) in enumerate(rows):
        if k and q.counter is not None and _counter(q) in out[0]:
            q = replace(q, counter=None)  # the counter-row the cell's first row already gives
        for text in (cell(verdict, q, question), short(verdict, q)):
            if text in out:  # a row that says nothing the cell does not already say
                break
            if k == 0 or words("; ".join(out + [text])) <= PLAIN_WORDS:
                out.append(text)
                break
    return "; ".join(out)


#: the setting fields a scope names, in order, with their words
_SCOPE = (("norm", "norm"), ("residual", ""), ("gamma", "gamma"), ("lam", "lam"), ("alpha", "alpha"), ("d", "d"),
          ("n", "n"))
#: fields named even when the row has one value of them (where a claim's rows differ)
_NAMED_ALONE = ("residual", "lam", "alpha")


def scope_of(settings: list[dict], most: int = 3) -> str:
    """The settings a row covers in words, from their typed fields: each field that varies as its values ("lam
    0.5/1/3": a grid's points, up to three) or its range ("alpha 0-0.9 (5 values)"), "with and without the residual",
    first, then the residual, lam and alpha where the row has one value;
    at most ``most`` fields; "" when none is typed."""
    varying, alone = [], []
    for key, name in _SCOPE:
        values = [s.get(key) for s in settings if isinstance(s, dict) and key in s]
        distinct = list(dict.fromkeys(values))
        if not distinct or len(values) != len(settings):
            continue
        if key == "residual" and all(isinstance(v, bool) for v in distinct):
            words = ("with and without the residual" if len(distinct) > 1 else
                     "with the residual" if distinct[0] else "without the residual")
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in distinct):
            points = sorted(distinct)
            words = f"{name} " + ("/".join(f"{v:g}" for v in points) if len(points) <= 3 else
                                  f"{points[0]:g}-{points[-1]:g} ({len(points)} values)")
        elif key == "norm" and all(isinstance(v, str) for v in distinct) and len(distinct) > 1:
            words = f"{name} " + ", ".join(distinct)
        else:
            continue
        if len(distinct) > 1:
            varying.append(words)
        elif key in _NAMED_ALONE:
            alone.append(words)
    return ", ".join((varying + alone)[:most])
