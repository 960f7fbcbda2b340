"""The premise counts' record in the cache (:func:`lnrecency.experiments.text.corpus.cached_counts`), checked field
by field when read back: a wrongly typed field is refused by name, never read into S2.0's verdict."""
from __future__ import annotations

from lnrecency.files.shapes import check_shape

__all__ = ["SUMMARY_SHAPE", "PREMISE_SHAPE", "check_premise_record"]

#: one subset's counts (lnrecency.experiments.text.corpus._summary)
SUMMARY_SHAPE = {"events": int, "next_is_c": int, "next_is_b": int, "frac_c": (float, None), "frac_b": (float, None),
                 "d": (float, None), "d_se": (float, None), "d_interval": ([float], None), "files": int}
#: the whole record
PREMISE_SHAPE = {"files": int, "tokens": int, "vocab": int, "key": str, "subsets": {"all": SUMMARY_SHAPE},
                 "bins": [{"d2": str, "d1": str, **SUMMARY_SHAPE}]}


def check_premise_record(data: dict) -> None:
    """ValueError naming the first field of ``data`` that is not the premise counts' (:data:`PREMISE_SHAPE`, each
    subset's :data:`SUMMARY_SHAPE`, a decisive subset named, each interval a pair)."""
    if not isinstance(data.get("subsets"), dict) or not any("decisive" in k for k in data["subsets"]):
        raise ValueError("it names no decisive subset")
    check_shape(data, PREMISE_SHAPE, "premise")
    for name, s in data["subsets"].items():
        check_shape(s, SUMMARY_SHAPE, f"premise.subsets.{name[:40]}")
        if s["d_interval"] is not None and len(s["d_interval"]) != 2:
            raise ValueError(f"premise.subsets.{name[:40]}.d_interval: not a pair")
