"""The README's answer (issue 66): the plain answer to "does LayerNorm induce recency bias, and where?" in at most
about 120 words, each part from its claims' results and plan v2's snapshot; the verdicts row by row are in the table
below it (:mod:`lnrecency.report.readme`)."""
from __future__ import annotations

from lnrecency.inference.verdicts import ClaimResult

__all__ = ["readme_answer"]


def readme_answer(results: list[ClaimResult], v2: dict | None = None, v3: dict | None = None) -> str:
    """The README's answer in plain English, at most about 120 words (issue 66): the effect in expectation, where it
    does not hold (no normalisation; a single draw; sqrt(d) scaling), what carries it on text (BOS, plan v2's
    snapshot ``v2``; how layer 2 reads it, plan v3's snapshot ``v3``) and the printed derivation; each part from its
    claims' results, left out when not evaluated."""
    from lnrecency.claims.catalog import answer_parts
    from lnrecency.report.headline import and_list as both
    from lnrecency.report.headline import label_of, role_rows, t1_rp

    out = []
    ((cid, which, _),) = answer_parts("theorem")
    if role_rows(results, cid, which):
        out.append(f"Yes, in expectation: with LayerNorm the expected layer-2 score rises with the key's "
                   f"position (Theorem 1: {label_of(results, cid, which)}; proved at d -> infinity).")
    (cid, flat_rows, flat_words), (deep_id, deep_rows, deep_words) = answer_parts("boundary")
    flat, deep = role_rows(results, cid, flat_rows), role_rows(results, deep_id, deep_rows)
    if flat and deep:  # each part with its own verdict, the deeper layers' by the residual (a split never reads as one)
        by = {r.verdict: {s.get("residual") for s in r.setting.to_json().get("settings", [])} for r in deep}
        where = ", ".join(f"{v} {'with' if res == {True} else 'without' if res == {False} else 'in some settings of'}"
                          f" {'the residual' if k == 0 else 'it'}" for k, (v, res) in enumerate(by.items()))
        out.append(f"Without normalisation {flat_words} ({label_of(flat, cid)}), and {deep_words} ({where}).")
    rp = t1_rp(results)
    if 1.0 in rp and 8.0 in rp and (ds := sorted(set(rp[1.0]) & set(rp[8.0]))):
        eight = [f"{rp[8.0][d]:.2f}" for d in ds]
        eight = f"{eight[0]} at both" if len(set(eight)) == 1 and len(eight) > 1 else both(eight)
        out.append(f"One draw orders key triples by recency with probability "
                   f"{both(f'{rp[1.0][d]:.2f}' for d in ds)} at d = {both(str(d) for d in ds)}, and {eight} with "
                   f"lam = 8, the sqrt(d) scaling (0.50 is chance).")
    cells = (v2 or {}).get("cells") or {}
    ln, free, none = (((cells.get(k) or {}).get(f) or (None, None))[0] for k, f in
                      (("bos layernorm", "change"), ("no bos layernorm", "slope"), ("no bos none", "slope")))
    if None not in (ln, free, none):
        read = _read_out(v3)
        out.append(f"In our text models, BOS carries it: fixing layer 1's attention to BOS removes "
                   f"{-100 * ln:.0f} % of LayerNorm's slope{read}; without BOS it is {free:+.4f} logit per key (none: "
                   f"{none:+.4f}).")
    printed = [cid for cid, which, _ in answer_parts("printed") if role_rows(results, cid, which)]
    if printed:
        good = sum(label_of(results, cid) == "confirmed" for cid in printed)
        out.append(f"The first version's printed derivation holds in {good} of {len(printed)} statements.")
    return " ".join(out)


def _read_out(v3: dict | None) -> str:
    """How layer 2 reads the BOS share, from plan v3's snapshot: ", read by layer 2's weights, not the
    normalisation's scale" when a test of the learned weights is confirmed and fixing the scale raised the slope (its
    test refuted); "" otherwise."""
    if not v3:
        return ""
    with_bos = [t for t in (v3.get("tests") or {}).values() if t.get("bos")]
    rows = [r for r in (v3.get("runs") or {}).get("bos layernorm", []) if r.get("learned")]
    scale = [t["verdict"] for t in with_bos if t.get("intervention") == "scale_fixed"]
    learned = [t["verdict"] for t in with_bos if t.get("intervention") not in (None, "scale_fixed")]
    if not rows or scale != ["refuted"] or "confirmed" not in learned:
        return ""
    intact = sum(r["slope"] for r in rows) / len(rows)
    fixed = sum(r["scale_fixed"] for r in rows) / len(rows)
    return ", read by layer 2's weights, not the normalisation's scale" if fixed > intact else ""
