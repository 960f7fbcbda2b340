"""Which setting the thesis on text needs (:func:`v2_setting`, issue 50: plan v2's pages and the TT claim pages say it
with these words; re-exported by :mod:`lnrecency.report.headline`). The answer on trained and real models is the one
engine's, :mod:`lnrecency.report.words.answer`."""
from __future__ import annotations

__all__ = ["v2_setting"]


def v2_setting(cells: dict, verdicts: dict, matched: list | None, *, quick: bool = False, brief: bool = False) -> str:
    """Which setting the thesis on text needs, in one plain sentence (plan v2, issue 50): ``cells`` as the experiment
    summarises them ("bos layernorm" -> {"slope": (mean, SE), "change": (mean, SE), ...}), ``verdicts`` claim ->
    label (TV1-TV6), ``matched``: TV3's interval (LayerNorm - none at matched loss). The report's answer, the
    README and the TT claim pages all say it with these words (``brief``: the README's, without the verdicts,
    which its table gives)."""
    def slope(cell):
        m = (cells.get(cell) or {}).get("slope") or (None, None)
        return "n/a" if m[0] is None else f"{m[0]:+.4f}"

    def change(cell):
        m = (cells.get(cell) or {}).get("change") or (None, None)
        return "n/a" if m[0] is None else f"{100 * m[0]:+.0f} %"

    from lnrecency.claims.catalog import answer_ids

    claim = answer_ids("plan v2")  # the plan's test -> its claim

    def said(*tests):
        return ", ".join(f"{claim[q]} {verdicts.get(claim[q], 'not evaluated')}" for q in tests)
    iv = (f"[{matched[0]:+.4f}, {matched[1]:+.4f}]" if matched and None not in matched[:2] else "n/a")
    lead = "Which setting it needs (plan v2, ours" + (", a quick run: not decisive" if quick else "") + "): "
    if brief:  # the README, whose table gives each TV verdict
        return (f"{lead}with BOS first, layer 1's BOS share carries LayerNorm's {slope('bos layernorm')} (fixing it: "
                f"{change('bos layernorm')}); without BOS, {slope('no bos layernorm')} against none "
                f"{slope('no bos none')}, and at matched loss LayerNorm minus none is {iv}.")
    return (f"{lead}with BOS first in every window LayerNorm's layer-2 slope is {slope('bos layernorm')} logit per "
            f"key, and layer 1's share of attention to BOS carries it: fixing that share changes it by "
            f"{change('bos layernorm')} ({said('Q4')}), without normalisation by {change('bos none')} "
            f"({said('Q5')}); without any BOS, LayerNorm reads {slope('no bos layernorm')} against none "
            f"{slope('no bos none')} ({said('Q1', 'Q2')}), and at matched loss LayerNorm minus none is {iv} "
            f"({said('Q3')}).")
