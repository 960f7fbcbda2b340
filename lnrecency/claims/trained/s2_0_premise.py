"""S2.0: seed 002's premise measured on real text (:mod:`lnrecency.experiments.text.corpus`).

Seed 002 finds recency in an induction head: after ``.. [A][B] .. [A][C] .. [A]`` it favours [C], the
continuation of the later [A]. Our formulation of the premise that would make this recency useful: in text,
the later continuation is the more frequent next token. Counted on a local corpus (default: the running
Python's standard library source), tokenised by a byte-level BPE trained here; decided on the subset fixed in
advance (both earlier [A]s within 16 tokens of the last, as in seed 002's Figure 1) by a one-sided z-test of
D = f_C - f_B with a cluster-robust (files) standard error at rate 0.01. The statement is seed 002's (a premise it
needs, written by us: the seed does not state it), counted on a corpus here, so it reads "confirmed" or "refuted"
(lnrecency.claims.catalog.label).
"""
from __future__ import annotations

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.inference.evidence import Evidence, NotRun, record
from lnrecency.inference.qualifiers import Counter, Qualifiers

STATEMENT = declared("S2.0").text("statement")


@record
class PremiseEvidence(Evidence):
    corpus: str
    files: int
    tokens: int
    decisive: dict
    subsets: dict
    bins: tuple
    definition: str
    vocab: int


def available() -> bool:
    """Whether the default corpus's counts are cached (the verdict then costs nothing)."""
    try:
        import tokenizers  # noqa: F401

        from lnrecency.experiments.text.corpus import cached_counts

        return cached_counts(compute=False) is not None
    except ImportError:
        return False


def evaluate(*, quick: bool = False, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        import tokenizers  # noqa: F401
    except ImportError as exc:
        return [ClaimResult("S2.0", result_source("S2.0", STATEMENT), STATEMENT, {}, "inconclusive",
                            NotRun(reason=f"needs the models extra (tokenizers): {exc}"),
                            "Not evaluated: needs the models extra (python3 -m pip install -e '.[models]').")]
    from lnrecency.experiments.text.corpus import cached_counts, premise_decision

    counts = cached_counts(progress=progress)
    verdict, reason = premise_decision(counts)
    name = next(k for k in counts["subsets"] if "decisive" in k)
    other = "; ".join(f"{k}: C {100 * v['frac_c']:.1f}%, B {100 * v['frac_b']:.1f}% of {v['events']}"
                      for k, v in counts["subsets"].items() if k != name and v["events"])
    def where(sign):
        return ", ".join(f"(d2 {b['d2']}, d1 {b['d1']}: C {100 * b['frac_c']:.0f}%, B {100 * b['frac_b']:.0f}%)"
                         for b in counts["bins"] if b["d_interval"] is not None
                         and sign * b["d_interval"][0 if sign > 0 else 1] > 0) or "nowhere"
    finding = (f"{reason}. Beside it: {other}. Where the later continuation is the more frequent one (95% "
               f"intervals by bin): {where(1)}; where the earlier one is: {where(-1)}. The corpus: "
               f"{counts['files']} files, {counts['tokens']} tokens (`lnrecency corpus-stats` gives every bin).")
    ev = PremiseEvidence(corpus=counts["corpus"], files=counts["files"], tokens=counts["tokens"],
                         decisive={name: counts["subsets"][name]}, subsets=counts["subsets"],
                         bins=tuple(counts["bins"]), definition=counts["definition"], vocab=counts["vocab"])
    return [ClaimResult("S2.0", result_source("S2.0", STATEMENT),
                        STATEMENT, {"case": "default corpus (Python standard library source)",
                                                    "seed_setting": "seed 002's model was trained on C4 and code "
                                                                    "(TransformerLens attn-only-2l)"},
                        verdict, ev, finding, _qualifiers(counts["subsets"], name))]


def _qualifiers(subsets: dict, decisive: str) -> Qualifiers:
    """The premise where it is decided (the corpus, the earlier [A]s within 16 tokens) and, as its counter-row, the
    same difference over every event of the corpus (issue 75: both subsets named)."""
    s, every = subsets[decisive], subsets.get("all") or {}
    lo, hi = s["d_interval"] if s.get("d_interval") else (None, None)
    counter = (Counter("all distances", every["d"], *(every.get("d_interval") or (None, None)))
               if every.get("d") is not None else None)
    return Qualifiers(where="Python stdlib source, earlier [A]s within 16 tokens",
                      comparison="later - earlier continuation share", estimate=s["d"], low=lo, high=hi,
                      counter=counter)


claim("S2.0", available=lambda quick: available())(evaluate)
