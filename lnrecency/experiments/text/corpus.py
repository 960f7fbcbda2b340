"""Seed 002's premise measured on real text, and the corpus of ``train lm``.

Seed 002 asks what an induction head should do after ``.. [A][B] .. [A][C] .. [A]``: its recency favours
[C], the continuation of the later [A]. Whether that helps depends on the text. On a local corpus, tokenised
by a byte-level BPE trained here (the ``tokenizers`` package; vocabulary 2048 by default), we count, **within
each file**, every position t whose token A = x[t] has two previous occurrences p1 < p2 < t (the last two
before t) with B = x[p1 + 1] != C = x[p2 + 1] and a next token x[t + 1]: how often x[t + 1] = C (the later
continuation) and how often x[t + 1] = B (the earlier one). Counts are binned by d2 = t - p2 and
d1 = t - p1. Positions inside one file are not independent, so every interval is cluster-robust over files
(the difference D = (n_C - n_B) / n has standard error from the per-file sums of n_C - n_B - D n; normal
quantiles; the number of files is large).

The default corpus is the source of the running interpreter's standard library (its ``*.py`` files outside
site-packages: present wherever Python is, no download). Any folder of text files can be used instead: every
regular file under it, in path order, that decodes as UTF-8 and has no NUL byte in its first 8 KiB.

The tokenizer (a JSON file: data, no code) and the counts are cached under ``$LNRECENCY_CACHE/corpus``, keyed
by the SHA-256 of the files' paths and contents and the tokenizer's settings.
"""
from __future__ import annotations

import hashlib
import math
import os
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from lnrecency.experiments.text.pieces import PIECE_CHARS, token_stream

__all__ = ["default_corpus", "corpus_files", "Corpus", "load_corpus", "premise_counts", "BINS", "VOCAB",
           "MAX_BYTES", "MAX_FILE_BYTES", "DECISIVE", "premise_decision", "cached_counts",
           "premise_cache_path", "events", "PREMISE_RATE"]

VOCAB = 2048
#: a corpus larger than this is refused before it is read (memory: the text, the token ids and their sort stay
#: within about 1 GiB; the default corpus, the standard library's source, is about 32 MB)
MAX_BYTES = 256 * 2**20
#: one file larger than this is refused before anything is read (the largest standard-library file is 0.8 MB)
MAX_FILE_BYTES = 32 * 2**20
#: folders deeper than this, or more entries than this, are refused while walking (no recursion)
MAX_DEPTH = 64
MAX_FILES = 200_000
#: the bins of d = t - p (tokens back to an earlier [A]): (low, high) inclusive
BINS = ((1, 8), (9, 16), (17, 64), (65, 512), (513, None))
#: the subset that decides the premise's verdict: both earlier [A]s within 16 tokens (seed 002's Figure 1
#: puts them within 12 tokens of the last [A]); fixed before any count
DECISIVE = 16
#: the premise's one-sided rate (a single test, outside the trained family)
PREMISE_RATE = 0.01


def default_corpus() -> Path:
    """The running interpreter's standard library folder."""
    return Path(sysconfig.get_paths()["stdlib"])


def _is_text(path: Path, size: int) -> bool:
    """No NUL byte in the file's head, middle and tail (a text header in front of a hole is not text)."""
    try:
        with open(path, "rb") as fh:
            for at in sorted({0, max(0, size // 2 - 4096), max(0, size - 8192)}):
                fh.seek(at)
                if b"\0" in fh.read(8192):
                    return False
        return True
    except OSError:
        return False


def _walk(root: Path, skip: frozenset = frozenset(), flag: str = "--corpus") -> Iterator[tuple[Path, os.stat_result]]:
    """Regular files under ``root`` with their stat, walked with an explicit stack (no recursion: a folder
    nested thousands deep is refused, not a RecursionError), links never followed, in sorted order; refused past
    :data:`MAX_DEPTH` levels or :data:`MAX_FILES` entries. Folders named in ``skip`` are not entered."""
    stack, seen = [(root, 0)], 0
    while stack:
        folder, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{flag} {str(root)!r} is nested deeper than {MAX_DEPTH} folders; use a shallower "
                             f"folder")
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            seen += 1
            if seen > MAX_FILES:
                raise ValueError(f"{flag} {str(root)!r} holds more than {MAX_FILES} entries; use a smaller folder")
            try:
                if e.is_symlink():
                    continue
                if e.is_dir(follow_symlinks=False):
                    if e.name not in skip:
                        subdirs.append((Path(e.path), depth + 1))
                elif e.is_file(follow_symlinks=False):
                    yield Path(e.path), e.stat(follow_symlinks=False)
            except OSError:
                continue
        stack.extend(reversed(subdirs))


def corpus_files(root: str | Path | None = None, flag: str = "--corpus") -> tuple[Path, list[Path]]:
    """(root, files): the default corpus's ``*.py`` outside site-packages (those within the per-file limit: the
    others are skipped, never a reason to refuse a corpus the user did not choose), or every text file under
    ``root``. Refused (ValueError naming ``flag``, the argument that named ``root``: ``--corpus``, or ``--text``
    for a probe's text) when it is empty text, not a folder, nested too deep, holds too many entries or no text
    file, when one file exceeds :data:`MAX_FILE_BYTES`, or the whole :data:`MAX_BYTES`. Sizes are the files' own
    (a sparse file counts at its full size), checked before anything is read."""
    default = root is None
    if not default and (not isinstance(root, (str, os.PathLike)) or not str(root).strip()):
        raise ValueError(f"{flag} must name a folder of text files; got {root!r}")
    root = default_corpus() if default else Path(root)
    if not root.is_dir():
        raise ValueError(f"{flag} must be a folder of text files; got {str(root)!r} (not a directory)")
    found, total = [], 0
    # the default corpus never enters site-packages (the installed packages: 10^5 entries and more, none of them
    # taken, which would cost seconds to list and could reach MAX_FILES)
    for f, st in _walk(root, frozenset({"site-packages"}) if default else frozenset(), flag):
        if default and (f.suffix != ".py" or "site-packages" in f.parts or st.st_size > MAX_FILE_BYTES):
            continue  # the default corpus takes the files it can use; the user chose none of the others
        if st.st_size > MAX_FILE_BYTES:
            raise ValueError(f"{flag} {str(root)!r}: {str(f)!r} holds {st.st_size} bytes, above the per-file limit "
                             f"{MAX_FILE_BYTES}; remove it or use another folder")
        total += st.st_size
        if total > MAX_BYTES:
            raise ValueError(f"{flag} {str(root)!r} holds more than {MAX_BYTES} bytes, the limit (memory); use a "
                             f"smaller folder")
        found.append((f, st.st_size))
    files = sorted(f for f, size in found if default or _is_text(f, size))
    if not files:
        raise ValueError(f"{flag} {str(root)!r} holds no text file")
    return root, files


def _read(path: Path) -> str | None:
    """The file's UTF-8 text, read up to its checked size (None: unreadable, not UTF-8, or a NUL inside)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES or b"\0" in data:
            return None
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class Corpus:
    """A tokenised corpus: token ids (int32), the file each token belongs to, and the tokenizer's JSON."""

    root: Path
    files: list
    ids: np.ndarray
    file_of: np.ndarray
    vocab: int
    key: str
    tokenizer_json: str

    @property
    def tokens(self) -> int:
        return int(self.ids.size)


def corpus_cache() -> Path:
    from lnrecency.experiments.run_cache import folder

    return folder("corpus")


def _save_npz(path: Path, **arrays) -> None:
    with open(path, "wb") as f:  # a file object: numpy adds no ".npz" to the temporary name
        np.savez(f, **arrays)


def _plain_npz(path: Path, most: int) -> bool:
    """Whether the cached ``ids.npz`` may be read: a regular file (not a link) whose members are stored
    uncompressed (as :func:`numpy.savez` writes them) and together declare at most ``most`` bytes (a token needs at
    most 4 bytes of the id and 4 of its file's number per character of text): a forged size or a zip bomb is
    rebuilt, never read."""
    import zipfile

    if path.is_symlink() or not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return (sorted(i.filename for i in infos) == ["file_of.npy", "ids.npy"]
            and all(i.compress_type == zipfile.ZIP_STORED for i in infos)
            and sum(i.file_size for i in infos) <= most)


def load_corpus(root: str | Path | None = None, *, vocab: int = VOCAB, progress: bool | None = False) -> Corpus:
    """Read, tokenise (training the byte-level BPE on the corpus, or reading it from the cache) and return the
    corpus. Files that do not decode as UTF-8 are skipped."""
    from lnrecency.runtime.arguments import check_int
    from lnrecency.runtime.progress import Progress

    check_int("vocab", vocab, minimum=260, maximum=65536)
    root, files = corpus_files(root)
    texts, kept = [], []
    h = hashlib.sha256(f"lnrecency-corpus-1 vocab={vocab}".encode())
    for f in files:
        text = _read(f)
        if text is None or not text:
            continue
        kept.append(f)
        texts.append(text)
        h.update(str(f.relative_to(root)).encode() + b"\0" + hashlib.sha256(text.encode()).digest())
    if not texts:
        raise ValueError(f"--corpus {str(root)!r} holds no UTF-8 text file")
    key = h.hexdigest()[:16]
    from lnrecency.experiments.run_cache import make_folder

    folder = make_folder(corpus_cache() / key)
    tok_path = folder / "tokenizer.json"
    from tokenizers import Tokenizer

    tok = None
    if tok_path.is_file() and not tok_path.is_symlink():
        try:
            tok = Tokenizer.from_file(str(tok_path))
        except Exception:  # a damaged cache entry is rebuilt, never trusted
            tok = None
    if tok is None:
        from tokenizers import ByteLevelBPETokenizer

        os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(texts, vocab_size=vocab, min_frequency=2, show_progress=False)
        tok = bpe._tokenizer
        from lnrecency.files.atomic import atomic_write_text

        atomic_write_text(tok_path, tok.to_str())
    ids_path = folder / "ids.npz"
    ids = file_of = None
    if ids_path.is_file() and _plain_npz(ids_path, 8 * (sum(len(t) for t in texts) + 1) + 2**16):
        try:
            with np.load(ids_path, allow_pickle=False) as z:
                ids, file_of = z["ids"], z["file_of"]
            if ids.shape != file_of.shape or ids.dtype != np.int32 or (ids.size and (ids.min() < 0 or
                                                                                    ids.max() >= tok.get_vocab_size())):
                ids = file_of = None
        except (OSError, ValueError, KeyError):
            ids = file_of = None
    if ids is None:
        bar = Progress(len(texts), "tokenise", "files", enabled=progress)
        parts, owners = [], []
        step = 256
        for start in range(0, len(texts), step):
            batch = texts[start:start + step]
            # a long file piece by piece (bounded memory, the same ids), the others in one batch; in file order
            small = [q for q, t in enumerate(batch) if len(t) <= PIECE_CHARS]
            got = dict(zip(small, (np.asarray(e.ids, dtype=np.int32)
                                   for e in tok.encode_batch([batch[q] for q in small]))))
            for q, text in enumerate(batch):
                ids_q = got.pop(q) if q in got else token_stream(lambda piece: tok.encode(piece).ids, [text])
                parts.append(ids_q)
                owners.append(np.full(ids_q.size, start + q, dtype=np.int32))
            bar.update(len(batch))
        bar.close()
        ids, file_of = np.concatenate(parts), np.concatenate(owners)
        from lnrecency.files.atomic import atomic_save

        if ids_path.is_symlink():
            ids_path.unlink()
        atomic_save(ids_path, lambda tmp: _save_npz(tmp, ids=ids, file_of=file_of))
    return Corpus(root, kept, ids, file_of, tok.get_vocab_size(), key, tok.to_str())


def _bin(d: np.ndarray) -> np.ndarray:
    out = np.full(d.shape, len(BINS) - 1)
    for q, (lo, hi) in reversed(list(enumerate(BINS))):
        if hi is not None:
            out[d <= hi] = q
    return out


def _label(q: int) -> str:
    lo, hi = BINS[q]
    return f"{lo}-{hi}" if hi is not None else f">= {lo}"


def events(c: Corpus) -> dict:
    """Every event of the module docstring: arrays d1, d2, file, is_c, is_b (one entry per position t)."""
    x, f = c.ids.astype(np.int64), c.file_of.astype(np.int64)
    n = x.size
    key = f * (c.vocab + 1) + x
    order = np.argsort(key, kind="stable")  # same (file, token): positions in increasing order
    prev = np.full(n, -1, dtype=np.int64)
    same = key[order[1:]] == key[order[:-1]]
    prev[order[1:][same]] = order[:-1][same]
    t = np.arange(n)
    p2 = prev
    ok = p2 >= 0
    p1 = np.full(n, -1, dtype=np.int64)
    p1[ok] = prev[p2[ok]]
    nxt_ok = np.zeros(n, dtype=bool)
    nxt_ok[:-1] = f[1:] == f[:-1]
    ok &= (p1 >= 0) & nxt_ok
    t, p1, p2 = t[ok], p1[ok], p2[ok]
    b, c_, nxt = x[p1 + 1], x[p2 + 1], x[t + 1]
    keep = b != c_
    t, p1, p2, b, c_, nxt = t[keep], p1[keep], p2[keep], b[keep], c_[keep], nxt[keep]
    return {"d1": t - p1, "d2": t - p2, "file": f[t], "is_c": nxt == c_, "is_b": nxt == b}


def _summary(ev: dict, mask: np.ndarray) -> dict:
    """Counts, fractions and the cluster-robust (files) interval of D = f_C - f_B on the events in ``mask``."""
    from scipy.stats import norm

    n = int(mask.sum())
    nc, nb = int(ev["is_c"][mask].sum()), int(ev["is_b"][mask].sum())
    out = {"events": n, "next_is_c": nc, "next_is_b": nb}
    if n == 0:
        return {**out, "frac_c": None, "frac_b": None, "d": None, "d_se": None, "d_interval": None, "files": 0}
    d = (nc - nb) / n
    files = ev["file"][mask]
    u, inv = np.unique(files, return_inverse=True)
    sums = np.bincount(inv, weights=ev["is_c"][mask].astype(float) - ev["is_b"][mask], minlength=u.size)
    counts = np.bincount(inv, minlength=u.size).astype(float)
    k = u.size
    resid = sums - d * counts
    se = math.sqrt(k / max(k - 1, 1) * float((resid ** 2).sum())) / n if k > 1 else math.nan
    z = float(norm.isf(0.025))
    return {**out, "frac_c": nc / n, "frac_b": nb / n, "d": d, "d_se": se,
            "d_interval": [d - z * se, d + z * se] if math.isfinite(se) else None, "files": int(k)}


def premise_counts(c: Corpus) -> dict:
    """The counts of the module docstring: overall, per (d2 bin, d1 bin), and the named subsets."""
    ev = events(c)
    b2, b1 = _bin(ev["d2"]), _bin(ev["d1"])
    bins = []
    for q2 in range(len(BINS)):
        for q1 in range(q2, len(BINS)):
            mask = (b2 == q2) & (b1 == q1)
            if mask.any():
                bins.append({"d2": _label(q2), "d1": _label(q1), **_summary(ev, mask)})
    every = np.ones(ev["d1"].shape, dtype=bool)
    subsets = {"all": every, f"both earlier [A] within {DECISIVE} tokens (d1 <= {DECISIVE}; decisive)":
               ev["d1"] <= DECISIVE, "both earlier [A] within 64 tokens (d1 <= 64)": ev["d1"] <= 64,
               "later [A] within 8, both within 64 (d2 <= 8, d1 <= 64)": (ev["d2"] <= 8) & (ev["d1"] <= 64)}
    return {"corpus": str(c.root), "files": len(c.files), "tokens": c.tokens, "vocab": c.vocab, "key": c.key,
            "definition": "within each file: t with two previous occurrences p1 < p2 < t of x[t] (the last two), "
                          "B = x[p1+1] != C = x[p2+1]; counts of x[t+1] = C and x[t+1] = B",
            "subsets": {name: _summary(ev, m) for name, m in subsets.items()}, "bins": bins}


def premise_decision(counts: dict) -> tuple[str, str]:
    """(verdict, reason) of the premise on the decisive subset: "reproduced" when D = f_C - f_B is
    significantly above 0 (one-sided z with the cluster-robust SE, rate PREMISE_RATE), "the opposite
    shown" when significantly below, else "inconclusive"."""
    from scipy.stats import norm

    name = next(k for k in counts["subsets"] if "decisive" in k)
    s = counts["subsets"][name]
    if not s["events"] or s["d_se"] is None or not math.isfinite(s["d_se"]) or s["d_se"] <= 0:
        return "inconclusive", f"{name}: no events to decide on"
    z = s["d"] / s["d_se"]
    k = float(norm.isf(PREMISE_RATE))
    verdict = "reproduced" if z > k else "the opposite shown" if z < -k else "inconclusive"
    return verdict, (f"{name}: next token C (later continuation) {100 * s['frac_c']:.1f}%, B (earlier) "
                     f"{100 * s['frac_b']:.1f}% of {s['events']} events in {s['files']} files; D = f_C - f_B = "
                     f"{s['d']:+.4f} (95% interval [{s['d_interval'][0]:+.4f}, {s['d_interval'][1]:+.4f}], "
                     f"cluster-robust over files), z = {z:+.1f} against the one-sided threshold {k:.2f} "
                     f"(rate {PREMISE_RATE})")


#: a premise cache holds a few hundred counts: larger or deeper is not one lnrecency wrote
MAX_CACHE_BYTES = 4 * 2**20
MAX_CACHE_DEPTH = 8


def premise_cache_path(root: str | Path | None = None, *, vocab: int = VOCAB) -> Path:
    """The cache entry of the corpus's premise counts, keyed cheaply (paths, sizes, modification times): found
    without reading the corpus."""
    root_, files = corpus_files(root)
    h = hashlib.sha256(f"lnrecency-premise-1 vocab={vocab}".encode())
    for f in files:
        st = f.stat()
        h.update(f"{f.relative_to(root_)}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return corpus_cache() / f"premise-{h.hexdigest()[:16]}.json"


def cached_counts(root: str | Path | None = None, *, vocab: int = VOCAB, progress: bool | None = False,
                  compute: bool = True) -> dict | None:
    """:func:`premise_counts`, cached by the corpus key; None when not cached and ``compute`` is False."""
    path = premise_cache_path(root, vocab=vocab)
    from lnrecency.experiments import run_cache

    data = run_cache.read(path, ("subsets", "bins"), max_bytes=MAX_CACHE_BYTES, max_depth=MAX_CACHE_DEPTH)
    if data is not None:
        from lnrecency.experiments.text.premise_record import check_premise_record

        try:
            check_premise_record(data)
        except ValueError as exc:
            raise run_cache.DamagedCache(f"premise cache {str(path)!r} does not hold the premise counts ({exc}); "
                                         f"delete it to count again") from None
        return data
    if not compute:
        return None
    data = premise_counts(load_corpus(root, vocab=vocab, progress=progress))
    run_cache.write(path, data)
    return data


class CorpusData:
    """The batches of ``train lm``: windows of n tokens of the tokenised corpus and their next tokens. Every
    tenth file (by path order) is held out; the other files form the training stream (files concatenated
    in path order). Windows start uniformly at random in their stream (numpy Generator: a seed fixes them)."""

    def __init__(self, c: Corpus):
        held = (c.file_of % 10) == 9
        self.train_ids, self.held_ids = c.ids[~held].astype(np.int64), c.ids[held].astype(np.int64)
        self.vocab = c.vocab
        if self.train_ids.size < 64 or self.held_ids.size < 64:
            raise ValueError(f"--corpus {str(c.root)!r} is too small for train lm: {self.train_ids.size} training "
                             f"and {self.held_ids.size} held-out tokens (at least 64 each; held out: every tenth "
                             f"file)")

    def _windows(self, ids: np.ndarray, n: int, size: int, rng: np.random.Generator):
        if ids.size < n + 2:
            raise ValueError(f"the corpus split has {ids.size} tokens, fewer than --n + 2 = {n + 2}")
        start = rng.integers(0, ids.size - n - 1, size=size)
        idx = start[:, None] + np.arange(n + 1)[None, :]
        w = ids[idx]
        return w[:, :-1], w[:, 1:]

    def train(self, n: int, size: int, rng: np.random.Generator):
        return self._windows(self.train_ids, n, size, rng)

    def heldout(self, n: int, size: int, rng: np.random.Generator):
        return self._windows(self.held_ids, n, size, rng)


__all__ += ["CorpusData"]
