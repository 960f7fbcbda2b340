"""What a plan on text decoders trains, declared as data (issue 82): its arms (:class:`Arm`) and their settings
(:class:`Arms`), read by :mod:`lnrecency.experiments.plans.text_arms`. Standard library only, like the rest of a
declaration (:mod:`lnrecency.experiments.plans.declaration` re-exports both); a wrong part is a ValueError naming the
arm and the field when the declaration is made."""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Arm", "Arms", "IMPOSED", "NORMS", "COLUMNS", "ROW", "JOB_FIELDS"]

#: layer 1's imposed first-key share an arm may name (lnrecency.experiments.plans.text_arms.share_of)
IMPOSED = ("profile", "profile none", "zero", "layernorm", "none")
NORMS = ("layernorm", "rmsnorm", "none", "centre", "layernorm-stopscale", "layernorm-fixgain")
#: what a per-run row may publish, each from the run's record (text_arms.seed_table)
COLUMNS = ("seed", "learned", "reached", "slope", "slope_se", "final_loss", "tokens", "stopped", "imposed_gap",
           "paths", "points")
#: the row plan v5 publishes (the default); an arm with a stop rule adds whether it reached the target and why it
#: stopped
ROW = ("seed", "learned", "slope", "slope_se", "final_loss", "tokens", "imposed_gap", "paths", "points")
#: what may name a run in the cache (its job): the arm's group, its normalisation, its seed
JOB_FIELDS = ("arm", "norm", "seed")


@dataclass(frozen=True)
class Arm:
    """One arm of a plan on text decoders the engine trains (:mod:`lnrecency.experiments.plans.text_arms`): its name,
    BOS first or not, its normalisation, layer 1's imposed first-key share (:data:`IMPOSED`, or None), and the
    settings fields that hold its seeds, its probe windows and its held-out evaluation interval (None: the base's);
    ``along``: probed along training (at the plan's loss levels and token steps; its slope the last step's);
    ``stop``: trained until the plan's target loss (``target_loss``, capped at ``cap_factor`` times the steps);
    ``paths``: the path decomposition of its slope recorded; ``group``: its name in its runs' records and cache
    entries (default: its name; arms of one group differ by normalisation, as plan v4's N1); ``cell``: the name its
    runs are published and its tests read them under (default: its name)."""

    name: str
    bos: bool
    norm: str
    imposed: str | None = None
    seeds: str = "seeds"
    windows: str = "windows"
    eval_every: str | None = None
    along: bool = False
    stop: bool = False
    paths: bool = True
    group: str | None = None
    cell: str | None = None

    def __post_init__(self):
        at = f"arm {self.name!r}"
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,15}", str(self.name)):
            raise ValueError(f"{at}: an arm's name is a letter then letters or digits (at most 16)")
        if self.group is not None and not re.fullmatch(r"[A-Za-z][A-Za-z0-9]{0,15}", str(self.group)):
            raise ValueError(f"{at}: group is a letter then letters or digits (at most 16); got {self.group!r}")
        if self.cell is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 .-]{0,39}", str(self.cell)):
            raise ValueError(f"{at}: cell is letters, digits, spaces, '.' or '-' (at most 40); got {self.cell!r}")
        for name in ("bos", "along", "stop", "paths"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{at}: {name} must be true or false; got {getattr(self, name)!r}")
        if self.norm not in NORMS:
            raise ValueError(f"{at}: norm must be one of {', '.join(NORMS)}; got {self.norm!r}")
        if self.imposed is not None and self.imposed not in IMPOSED:
            raise ValueError(f"{at}: imposed must be one of {', '.join(IMPOSED)} or None; got {self.imposed!r}")

    @property
    def recorded(self) -> str:
        """Its name in its runs' records and cache entries."""
        return self.group or self.name

    @property
    def published(self) -> str:
        """The cell its runs are published under."""
        return self.cell or self.name


@dataclass(frozen=True)
class Arms:
    """What a plan on text decoders trains, as data: its arms (declared order: an arm's index, or with plan v4's stream
    its group's, seeds its windows' stream), the job order (arm names, the longest first), its settings fields ((name,
    value) pairs, in the order a snapshot publishes them) and the values its quick preset changes (its fields and plan
    v2's quick training's).

    ``stream``: the held-out windows' random stream, an int k (``SeedSequence([k, arm index, seed])``) or
    ``("probe", k)``, the stream plan v4 used (``SeedSequence([the base's probe seed of the run's normalisation and
    seed, k, its group's index])``); ``jobs``: the fields that name a run in the cache (:data:`JOB_FIELDS`, in order;
    "arm" is the arm's group); ``row``: what each run's published row holds, in order (:data:`COLUMNS`)."""

    arms: tuple
    order: tuple
    fields: tuple
    quick: tuple
    quick_base: tuple = (("steps", 60), ("warmup", 10), ("eval_every", 30))
    stream: int | tuple = 0x5EED5
    version: int = 1
    jobs: tuple = ("arm", "seed")
    row: tuple = ROW

    def __post_init__(self):
        names = [a.name for a in self.arms]
        if not self.arms or not all(isinstance(a, Arm) for a in self.arms) or len(set(names)) != len(names):
            raise ValueError(f"arms must be Arm records with distinct names; got {names}")
        if sorted(self.order) != sorted(names):
            raise ValueError(f"arms: the job order must name each arm once; it names {list(self.order)}, the arms "
                             f"are {names}")
        if (not self.jobs or any(f not in JOB_FIELDS for f in self.jobs) or len(set(self.jobs)) != len(self.jobs)
                or "arm" not in self.jobs or "seed" not in self.jobs):
            raise ValueError(f"arms: jobs names the arm, the seed and optionally the norm, each once, from "
                             f"{', '.join(JOB_FIELDS)}; got {list(self.jobs)}")
        named = [(a.recorded, a.norm if "norm" in self.jobs else None) for a in self.arms]
        if len(set(named)) != len(named):
            raise ValueError(f"arms: two arms file their runs under one name ({named}); give them distinct groups, or "
                             f"add 'norm' to jobs")
        cells = [a.published for a in self.arms]
        if len(set(cells)) != len(cells):
            raise ValueError(f"arms: two arms publish under one cell; got {cells}")
        if any(c not in COLUMNS for c in self.row) or len(set(self.row)) != len(self.row) or "slope" not in self.row:
            raise ValueError(f"arms: row holds the slope and other columns of {', '.join(COLUMNS)}, each once; got "
                             f"{list(self.row)}")
        if not (isinstance(self.stream, int) or (isinstance(self.stream, tuple) and len(self.stream) == 2
                                                   and self.stream[0] == "probe" and isinstance(self.stream[1], int))):
            raise ValueError(f"arms: stream is an int or ('probe', int); got {self.stream!r}")
        fields = dict(self.fields)
        if "reached" in self.row and "target_loss" not in fields:
            raise ValueError("arms: a row that says whether each run reached the target needs the settings field "
                             "target_loss")
        for a in self.arms:
            used = [a.seeds, a.windows] + ([a.eval_every] if a.eval_every else []) + (
                ["levels", "token_steps"] if a.along else []) + (["target_loss", "cap_factor"] if a.stop else [])
            missing = [f for f in used if f not in fields]
            if missing:
                raise ValueError(f"arm {a.name!r} reads the settings fields {', '.join(missing)}, which the plan does "
                                 f"not declare (its fields: {', '.join(fields)})")
        unknown = [k for k, _ in self.quick if k not in fields]
        if unknown:
            raise ValueError(f"arms: the quick preset changes {', '.join(unknown)}, which are not settings fields")
