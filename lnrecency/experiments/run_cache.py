"""The one cache of the experiments' runs: where an entry lives, its key, reading it back validated, writing it
atomically, and running the jobs that are not cached in worker processes with progress.

Every experiment on trained or real models (the thesis, the thesis on text, the seeds' experiments, the pretrained
models) and the corpus's tokenizer cache keep their results here, under ``$LNRECENCY_CACHE`` (default
``~/.cache/lnrecency``), one folder per kind (:data:`KINDS`). An entry is a JSON object written atomically; it is read
as data (:func:`read`: a regular file of bounded size and depth, finite numbers, the keys it must have) and a damaged
entry raises :class:`DamagedCache` naming the file and the fix, so that no caller mistakes it for "not run".
"""
from __future__ import annotations

import hashlib
import json
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ["KINDS", "MAX_BYTES", "MAX_DEPTH", "DamagedCache", "cache_root", "folder", "entry", "key", "read", "write",
           "filed_as", "cached_all", "PlanRuns",
           "link_on_the_way",
           "make_folder", "cached_jobs", "READS", "reads", "clear_reads", "note_reads", "using_root"]

#: the folders of the cache, one per kind of entry (and one per declared study: lnrecency.experiments.plans.declared)
KINDS = ("runs", "thesis-text", "thesis-text-v2", "thesis-text-v3", "thesis-text-v4", "thesis-text-v5", "wu-icl",
         "seeds", "pretrained", "corpus", "gguf", "regenerate")
#: the largest entry read back and its deepest nesting (a run's record is about 100 kB, nested about 6 deep)
MAX_BYTES = 64 * 2**20
MAX_DEPTH = 32


#: the cache entries this process read (and the reads its workers reported, :func:`note_reads`): what a report
#: states it used (its provenance)
READS: list[dict] = []


def clear_reads() -> None:
    READS.clear()


def note_reads(entries: list[dict]) -> None:
    """Add the reads a worker process reported."""
    READS.extend(entries)


def reads() -> list[dict]:
    """Every cache entry read since :func:`clear_reads`, once each, in the order first read: {"kind", "entry",
    "path", "bytes", "modified" (UTC), "sha256", "plan_sha256" (a record's plan, when it names one)}."""
    seen: dict[str, dict] = {}
    for e in READS:
        seen.setdefault(e["path"], e)
    return list(seen.values())


def _note(path: Path, data: dict) -> None:
    import datetime

    try:
        st = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return
    try:
        kind = path.parent.relative_to(cache_root()).parts[0]
    except (ValueError, IndexError):
        kind = path.parent.name
    plan = data.get("plan_sha256")
    READS.append({"kind": kind, "entry": path.name, "path": str(path), "bytes": st.st_size,
                  "modified": datetime.datetime.fromtimestamp(st.st_mtime, datetime.timezone.utc)
                  .strftime("%Y-%m-%d %H:%M UTC"), "sha256": digest,
                  "plan_sha256": plan if isinstance(plan, str) else None})


class DamagedCache(ValueError):
    """A cache entry that is there but cannot be used (one line: the file, what is wrong, how to fix it)."""


def cache_root() -> Path:
    """``$LNRECENCY_CACHE``, else ``~/.cache/lnrecency``; :class:`DamagedCache` naming the variable when it names
    something that is there but not a folder (a file, a device, a link to a file)."""
    env = os.environ.get("LNRECENCY_CACHE")
    root = Path(env or Path.home() / ".cache" / "lnrecency")
    if root.exists() and not root.is_dir():
        raise DamagedCache(f"the cache root {str(root)!r} " + ("($LNRECENCY_CACHE) " if env else "")
                           + "is not a folder; point LNRECENCY_CACHE at a folder (or remove the file)")
    return root


#: what :func:`cache_label` says inside a hermetic block (``using_root(..., hermetic=True)``)
HERMETIC = "none: --no-cache (an empty temporary folder, removed after)"
_HERMETIC: list[bool] = []


def cache_label() -> str:
    """The cache folder a report names as the one it read (issue 66): the resolved root, or :data:`HERMETIC` inside
    a hermetic block, whose temporary folder's name is no part of the result."""
    return HERMETIC if _HERMETIC and _HERMETIC[-1] else str(cache_root().resolve())


@contextmanager
def using_root(root: str | os.PathLike | None, *, hermetic: bool = False) -> Iterator[Path]:
    """Within the block the cache root is ``root`` (None: unchanged): ``$LNRECENCY_CACHE`` set, restored after
    (worker processes forked inside inherit it). A hermetic run points it at an empty folder (``hermetic``: a
    temporary one, named by :func:`cache_label` as none)."""
    before = os.environ.get("LNRECENCY_CACHE")
    if root is not None:
        os.environ["LNRECENCY_CACHE"] = str(Path(root).resolve())
    _HERMETIC.append(bool(hermetic))
    try:
        yield cache_root()
    finally:
        _HERMETIC.pop()
        if root is not None:
            if before is None:
                os.environ.pop("LNRECENCY_CACHE", None)
            else:
                os.environ["LNRECENCY_CACHE"] = before


def folder(kind: str) -> Path:
    """The folder of the entries of ``kind``."""
    from lnrecency.experiments.plans.declared import STUDIES

    kinds = KINDS + tuple(name for name in STUDIES if name not in KINDS)  # a plan declared since files under its name
    if kind not in kinds:
        raise ValueError(f"cache kind must be one of {', '.join(kinds)}; got {kind!r}")
    return cache_root() / kind


def entry(kind: str, name: str) -> Path:
    """The path of entry ``name`` of ``kind`` (a file name: no folder, no '..')."""
    if not name or "/" in name or "\\" in name or name in (".", "..") or name.startswith("."):
        raise ValueError(f"a cache entry is named by a plain file name; got {name!r}")
    return folder(kind) / name


def make_folder(path: str | os.PathLike) -> Path:
    """``path``, a folder inside the cache root, made (with the folders between) without following a symlink
    (:func:`lnrecency.files.atomic.plain_folder`): a part that is a link or not a folder raises
    :class:`DamagedCache` naming it and the fix. So no cache write ever lands outside the cache root."""
    from lnrecency.files.atomic import plain_folder

    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    try:
        return plain_folder(root, path, "cache entry")
    except FileExistsError as exc:
        raise DamagedCache(str(exc)) from None


def key(*parts: Any) -> str:
    """A stable short hash of JSON-able parts (a configuration and the settings of a run): the cache keys."""
    text = json.dumps([asdict(p) if hasattr(p, "__dataclass_fields__") and not hasattr(p, "as_dict")
                       else (p.as_dict() if hasattr(p, "as_dict") else p) for p in parts],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read(path: Path, required: tuple = (), *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH,
         shape: Any = None, check: Callable[[dict], None] | None = None) -> dict | None:
    """A cached entry as data: None when the file does not exist; the record when it is a regular file of at most
    ``max_bytes`` holding a JSON object nested at most ``max_depth`` deep, with only finite numbers, the
    ``required`` keys, fields of the types ``shape`` gives (:func:`lnrecency.files.shapes.check_shape`) and passing
    ``check(record)`` (the record's own settings against its key, a plan's hash: a ValueError saying what
    disagrees); otherwise :class:`DamagedCache` naming the file and what is wrong (a verdict read from a damaged,
    mistyped, misfiled or NaN-carrying run would be wrong)."""
    path = Path(path)
    link = link_on_the_way(path)
    if link is not None:
        raise DamagedCache(f"cache {'file' if link == path else 'folder'} {str(link)!r} is a symbolic link; a cache "
                           f"entry is read only from plain folders inside the cache root {str(cache_root())!r} "
                           "(remove the link and run the experiment again)")
    if not path.exists():
        return None
    from lnrecency.files.readers import read_json

    where = f"cache file {str(path)!r}"
    fix = "delete it and run the experiment again"
    try:
        data = read_json(path, what="cache file", max_bytes=max_bytes, max_depth=max_depth,
                         links=False)  # opened without following a link put in its place after the check
    except (ValueError, OSError) as exc:
        raise DamagedCache(f"{exc}; {fix}") from None
    if not isinstance(data, dict):
        raise DamagedCache(f"{where} does not hold a JSON object; {fix}")
    missing = [k for k in required if k not in data]
    if missing:
        raise DamagedCache(f"{where} lacks {missing}; {fix}")
    try:
        if shape is not None:
            from lnrecency.files.shapes import check_shape

            check_shape(data, shape, "record")
        if check is not None:
            check(data)
    except ValueError as exc:
        raise DamagedCache(f"{where}: {exc}; {fix}") from None
    _note(path, data)
    return data


def filed_as(names: tuple, job: tuple, plan: str, what: str) -> Callable:
    """The check of a cached record filed under ``job`` (the values of its fields ``names``): it holds the same job and
    names the plan it was made under (SHA-256 ``plan``, ``what`` in words); the one check every plan's runs use."""
    def check(rec: dict) -> None:
        said = tuple(rec[n] for n in names)
        if said != tuple(job):
            raise ValueError(f"it is filed as {', '.join(f'{n} {v}' for n, v in zip(names, job))} but holds "
                             f"{', '.join(f'{v!r:.20}' for v in said)}")
        if rec["plan_sha256"] != plan:
            raise ValueError(f"it was made under the plan with SHA-256 {rec['plan_sha256'][:16]:.16}..., not {what} "
                             f"as shipped ({plan[:16]}...)")
    return check


def cached_all(jobs: list, path_of: Callable, required: tuple, *, shape: dict, check_of: Callable) -> list | None:
    """Every job's record from the cache, read and checked (:func:`read`), in job order; None when one is missing."""
    runs = [read(path_of(job), required, shape=shape, check=check_of(job)) for job in jobs]
    return None if any(r is None for r in runs) else runs


def link_on_the_way(path: Path) -> Path | None:
    """The first symbolic link among ``path`` and the folders between it and the cache root (the root itself, the
    user's choice, may be a link), or None. A path outside the root is checked itself only."""
    root = cache_root()
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts, root = (path.name,), path.parent
    here = root
    for part in parts:
        here = here / part
        if here.is_symlink():
            return here
        if not here.exists():
            return None
    return None


def write(path: Path, record: dict) -> Path:
    """Write ``record`` to ``path`` atomically (strict JSON: a NaN is refused, never cached)."""
    from lnrecency.files.atomic import atomic_write_text

    path = Path(path)
    make_folder(path.parent)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise DamagedCache(f"cache file {str(path)!r} is not a plain file lnrecency wrote; remove it and run again")
    return atomic_write_text(path, json.dumps(record, allow_nan=False) + "\n")


def cached_jobs(fn: Callable, jobs: list, path_of: Callable, *, args_of: Callable, use_cache: bool = True,
                required: tuple = (), what: str = "runs", progress: bool | None = False,
                workers: int | None = None, shape: Any = None, check_of: Callable | None = None,
                scheduler: str = "local") -> list:
    """The records of ``jobs`` in job order: each read from its entry ``path_of(job)`` when there (``use_cache``),
    else ``fn(*args_of(job))`` run ``workers`` at a time in worker processes, or each a task on the Dask cluster at
    ``scheduler`` (the same bytes as serially; lnrecency.experiments.decoders.parallel) and written to its entry as
    it finishes, with a progress bar over what is trained (one step per run, named). ``shape`` and ``check_of(job)``
    validate a cached record (:func:`read`)."""
    from lnrecency.experiments.decoders.parallel import run_jobs
    from lnrecency.runtime.progress import Progress

    done = {job: read(path_of(job), required, shape=shape, check=check_of(job) if check_of else None)
            if use_cache else None for job in jobs}
    todo = [job for job in jobs if done[job] is None]
    bar = Progress(len(todo), what, "models", enabled=progress)

    def finished(q: int, rec: dict) -> None:
        write(path_of(todo[q]), rec)
        job = todo[q]
        bar.update(1, named(job))

    def named(job) -> str:
        return "/".join(map(str, job)) if isinstance(job, tuple) else str(job)

    argses = [args_of(job) for job in todo]
    names = {id(a): named(job) for a, job in zip(argses, todo)}
    try:
        for job, rec in zip(todo, run_jobs(fn, argses, workers=workers, done=finished, scheduler=scheduler,
                                           label=lambda a: names.get(id(a), str(a)))):
            done[job] = rec
    finally:
        bar.close()
    return [done[job] for job in jobs]


@dataclass(frozen=True)
class PlanRuns:
    """A plan's runs in the cache, defined once for every plan (plans v1-v5, Wu et al.'s): folder ``kind``, each job (a
    tuple of the values of its fields ``names``) filed as ``{settings key}-{its label}.json`` (``label``: the job's
    values joined by "-" unless the plan names its files otherwise, e.g. "bos"/"nobos" for plan v2's BOS) and checked
    (:func:`filed_as`) against the plan's SHA-256 (``plan()``), and by ``more(job, st)`` where the plan checks more
    (Wu et al.'s: the settings and the probe rows), read with its ``required`` keys and ``shape``; ``what``: the plan
    in words ("plan v5"); ``runs``: its runs in words ("plan v5 runs"), as progress names them."""

    kind: str
    names: tuple
    plan: Callable[[], str]
    what: str
    required: tuple
    shape: dict
    label: Callable | None = None
    more: Callable | None = None
    runs: str = ""

    def path(self, st, job: tuple) -> Path:
        name = "-".join(map(str, job)) if self.label is None else self.label(*job)
        return entry(self.kind, f"{st.key()}-{name}.json")

    def check(self, job: tuple, st=None) -> Callable:
        filed = filed_as(self.names, job, self.plan(), self.what)
        if self.more is None:
            return filed
        more = self.more(job, st)

        def check(rec: dict) -> None:
            filed(rec)
            more(rec)
        return check

    def read(self, st, job: tuple) -> dict | None:
        """One run's record from the cache, read and checked; None if absent."""
        return read(self.path(st, job), self.required, shape=self.shape, check=self.check(job, st))

    def cached(self, st) -> list | None:
        """Every run of ``st.jobs()`` from the cache, in job order; None when one is missing."""
        return cached_all(st.jobs(), lambda job: self.path(st, job), self.required, shape=self.shape,
                          check_of=lambda job: self.check(job, st))

    def run(self, fn: Callable, st, **options) -> list:
        """Every run, ``fn(*job, st)`` for those not cached (:func:`cached_jobs`: ``options`` use_cache, progress,
        workers, scheduler)."""
        return cached_jobs(fn, st.jobs(), lambda job: self.path(st, job), args_of=lambda job: (*job, st),
                           required=self.required, what=self.runs or f"{self.what} runs", shape=self.shape,
                           check_of=lambda job: self.check(job, st), **options)
