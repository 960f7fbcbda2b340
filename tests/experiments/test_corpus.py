"""Seed 002's premise on real text (lnrecency.experiments.text.corpus, `lnrecency corpus-stats`, claim S2.0).

* The counts against an independent brute-force count written here (a loop over positions), on a small
  corpus folder made here, through the tokenizer's own token ids.
* The decision says no: a corpus built so that the earlier continuation wins is "the opposite
  shown", one where the later wins is "reproduced".
* Bad folders are refused with exit 2 and one line.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tokenizers")

from lnrecency.cli.app import main  # noqa: E402
from lnrecency.experiments.text.corpus import BINS, events, load_corpus, premise_counts, premise_decision  # noqa: E402


def _brute(ids: np.ndarray, file_of: np.ndarray) -> list:
    """Every event, by a plain loop: (d1, d2, next is C, next is B)."""
    out = []
    for f in np.unique(file_of):
        x = ids[file_of == f].tolist()
        seen: dict = {}
        for t, a in enumerate(x):
            occ = seen.setdefault(a, [])
            if len(occ) >= 2 and t + 1 < len(x):
                p1, p2 = occ[-2], occ[-1]
                b, c = x[p1 + 1], x[p2 + 1]
                if b != c:
                    out.append((t - p1, t - p2, x[t + 1] == c, x[t + 1] == b))
            occ.append(t)
    return sorted(out)


def _write(folder, texts):
    folder.mkdir(parents=True, exist_ok=True)
    for q, text in enumerate(texts):
        (folder / f"f{q:03d}.txt").write_text(text)


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_counts_match_a_brute_force_count(cache):
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "(", ")", ":", "\n", "def", "x"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(50, 400)))) for _ in range(30)]
    _write(cache / "corpus", texts)
    c = load_corpus(cache / "corpus", vocab=300)
    ev = events(c)
    got = sorted(zip(ev["d1"].tolist(), ev["d2"].tolist(), ev["is_c"].tolist(), ev["is_b"].tolist()))
    assert got == _brute(c.ids, c.file_of) and len(got) > 100
    counts = premise_counts(c)
    total = counts["subsets"]["all"]
    assert total["events"] == len(got) and total["next_is_c"] == sum(e[2] for e in got)
    assert sum(b["events"] for b in counts["bins"]) == len(got)
    assert len(BINS) == 5


def _premise_corpus(later_wins: bool) -> list:
    """Files of "a b ... a c ... a X" with X the later (c) or the earlier (b) continuation."""
    rng = np.random.default_rng(1)
    texts = []
    for _ in range(60):
        parts = []
        for _ in range(40):
            b, c = rng.choice(["red", "blue", "green", "pink", "gold", "gray"], size=2, replace=False)
            nxt = c if later_wins else b
            parts.append(f"key {b} one two key {c} three key {nxt} .\n")
        texts.append("".join(parts))
    return texts


def test_the_premise_decision_can_say_no(cache):
    for later, want in ((True, "reproduced"), (False, "the opposite shown")):
        folder = cache / f"c{int(later)}"
        _write(folder, _premise_corpus(later))
        verdict, reason = premise_decision(premise_counts(load_corpus(folder, vocab=300)))
        assert verdict == want, reason


def test_command_json_and_refusals(cache, capsys):
    _write(cache / "small", _premise_corpus(True)[:20])
    assert main(["corpus-stats", "--corpus", str(cache / "small"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"]["id"] == "S2.0" and out["subsets"]["all"]["events"] > 0
    assert main(["corpus-stats", "--corpus", str(cache / "nowhere")]) == 2
    assert "--corpus" in capsys.readouterr().err
    (cache / "empty").mkdir()
    assert main(["corpus-stats", "--corpus", str(cache / "empty")]) == 2


def test_a_cache_with_nan_fractions_is_refused_naming_the_file(cache, capsys):
    """A premise cache is data: read through the validating reader (regular file, size, depth, finite numbers).
    A NaN fraction once gave "reproduced" with "nan%" in the finding; now it is a one-line refusal naming the file
    and what to do. The legitimate cache beside it still reads."""
    _write(cache / "small", _premise_corpus(True)[:20])
    assert main(["corpus-stats", "--corpus", str(cache / "small"), "--json"]) == 0
    capsys.readouterr()
    (path,) = (cache / "cache" / "corpus").glob("premise-*.json")
    good = path.read_text()
    path.write_text(good.replace('"frac_c": ', '"frac_c": NaN, "x": ', 1))
    assert main(["corpus-stats", "--corpus", str(cache / "small")]) == 2
    err = capsys.readouterr().err.strip()
    assert str(path.name) in err and "delete" in err and len(err.splitlines()) == 1 and "Traceback" not in err
    path.write_text("[" * 50_000 + "]" * 50_000)
    assert main(["corpus-stats", "--corpus", str(cache / "small")]) == 2
    assert path.name in capsys.readouterr().err
    path.write_text(good)
    assert main(["corpus-stats", "--corpus", str(cache / "small"), "--json"]) == 0


@pytest.mark.parametrize("case", ["empty name", "nested 1400 deep", "sparse 1.9 GB", "text header then a hole"])
def test_hostile_corpus_folders_are_refused_before_reading(cache, capsys, case):
    """Walked iteratively with depth and count bounds; sizes (a sparse file at its full size) checked before any
    read; a text header in front of a hole is not text. Each: exit 2, one line, at once."""
    import time

    root = cache / "c"
    root.mkdir()
    if case == "empty name":
        arg = ""
    elif case == "nested 1400 deep":
        cur = root
        for _ in range(1400):
            cur = cur / "a"
            cur.mkdir()
        (cur / "x.txt").write_text("hello world " * 50)
        arg = str(root)
    else:
        size = 1_900_000_000 if case.startswith("sparse") else 4 * 2**20
        with open(root / "a.txt", "wb") as fh:
            fh.write(b"a plain text header\n" * 20)
            fh.truncate(size)
        arg = str(root)
    start = time.monotonic()
    assert main(["corpus-stats", "--corpus", arg]) == 2
    err = capsys.readouterr().err.strip()
    assert time.monotonic() - start < 10 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "--corpus" in err
    if case.startswith("text header"):
        assert "no text file" in err
    if case.startswith("nested"):  # removed bottom-up here: pytest's own cleanup recurses and would fail on it
        cur.joinpath("x.txt").unlink()
        while cur != root:
            cur.rmdir()
            cur = cur.parent


def test_probe_reads_a_train_lm_checkpoint_on_its_corpus_text_and_random_tokens(cache, capsys, tmp_path):
    """`probe MODEL_DIR` on a `train lm` checkpoint: its held-out corpus (task), a --text file in its own
    tokenizer, and uniform random tokens; the first key out; a changed corpus is refused."""
    pytest.importorskip("torch")
    folder = cache / "lm"
    _write(folder, _premise_corpus(True)[:30])
    ck = tmp_path / "ck"
    assert main(["train", "lm", "--corpus", str(folder), "--steps", "3", "--n", "16", "--batch", "4",
                 "--eval-every", "0", "--out", str(ck)]) == 0
    capsys.readouterr()
    text = tmp_path / "t.txt"
    text.write_text("key red one two key blue three key blue .\n" * 40)
    for tokens, extra in (("task", []), ("text", ["--text", str(text)]), ("random", [])):
        assert main(["probe", str(ck), "--n", "16", "--sequences", "8", "--tokens", tokens, *extra, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["settings"]["tokens"] == tokens and out["settings"]["bos_first"]
        assert all(lay["sink"] is not None for lay in out["layers"])
    # every default but the count: --n falls to the model's context (16), not a default it cannot take; the settings
    # line says what the windows began with (a train lm model has no BOS) and the positions
    assert main(["probe", str(ck), "--tokens", "text", "--text", str(text), "--sequences", "8"]) == 0
    said = capsys.readouterr().out
    assert "n = 16," in said and "no BOS, the first key out" in said and "BOS first" not in said
    assert "\npositions: " in said
    assert main(["probe", str(ck), "--tokens", "bos-response", "--n", "16", "--sequences", "8"]) == 2
    assert "BOS" in capsys.readouterr().err
    (folder / "f000.txt").write_text("changed\n")
    assert main(["probe", str(ck), "--n", "16", "--sequences", "8"]) == 2
    assert "changed since the model was trained" in capsys.readouterr().err


def test_the_default_corpus_never_enters_site_packages(tmp_path, monkeypatch):
    """The default corpus (the standard library's *.py) takes nothing from site-packages, so it does not list it:
    a site-packages folder past MAX_FILES entries is neither walked nor a reason to refuse. A corpus the user names
    is walked whole, a folder named site-packages included (its files are the user's)."""
    from lnrecency.experiments.text import corpus

    stdlib = tmp_path / "lib"
    (stdlib / "json").mkdir(parents=True)
    (stdlib / "json" / "decoder.py").write_text("x = 1\n")
    (stdlib / "os.py").write_text("y = 2\n")
    packages = stdlib / "site-packages" / "pkg"
    packages.mkdir(parents=True)
    (packages / "mod.py").write_text("z = 3\n")
    monkeypatch.setattr(corpus, "default_corpus", lambda: stdlib)
    walked = []
    real = corpus._walk

    def recording(root, skip=frozenset(), *flag):
        for entry in real(root, skip, *flag):
            walked.append(entry[0])
            yield entry

    monkeypatch.setattr(corpus, "_walk", recording)
    monkeypatch.setattr(corpus, "MAX_FILES", 4)  # the 4 entries outside site-packages; walking it would make 6
    root, files = corpus.corpus_files()
    assert root == stdlib and files == [stdlib / "json" / "decoder.py", stdlib / "os.py"]
    assert walked and all("site-packages" not in p.parts for p in walked)  # not listed, not only left out
    with pytest.raises(ValueError, match="more than 4 entries"):  # the user's folder is walked whole
        corpus.corpus_files(stdlib)
    monkeypatch.setattr(corpus, "MAX_FILES", 200_000)
    assert corpus.corpus_files(stdlib)[1] == [stdlib / "json" / "decoder.py", stdlib / "os.py", packages / "mod.py"]
