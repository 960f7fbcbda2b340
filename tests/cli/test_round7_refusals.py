"""Robustness round 7 (issue 78), the command line: an argument error is refused in one line naming the flag and the
value, exit 2, before numpy's users, scipy or matplotlib load (the report's imports took 14-30 s under load before
`report --seed -1` was refused); each beside a neighbour that gets past the same check."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap


def test_seed_and_se_are_refused_before_the_heavy_imports(tmp_path):
    (tmp_path / "afile").write_text("x")
    cases = {
        "report seed": (["report", "--seed", "-1", "--out", str(tmp_path / "o")], "--seed must be an integer >= 0; "
                                                                                  "got -1"),
        "simulate seed": (["simulate", "--seed", "-1"], "--seed must be an integer >= 0; got -1"),
        "simulate se": (["simulate", "--se", "0"], "--se must be in (0, inf); got 0.0"),
        "simulate d": (["simulate", "--d", "1"], "--d must be an integer >= 2 for --norm layernorm"),
        "simulate samples": (["simulate", "--samples", "1"], "--samples must be an integer >= 2; got 1"),
        "simulate method": (["simulate", "--method", "x"], "--method must be one of 'direct', 'gram'; got 'x'"),
        # the neighbour: a valid seed gets past the check, to the next refusal (--out is a file)
        "report seed ok": (["report", "--seed", "5", "--out", str(tmp_path / "afile")], "--out must be a directory"),
    }
    script = textwrap.dedent(f"""
        import contextlib, io, json, sys, time
        from lnrecency.cli.app import main
        out = {{}}
        for name, (argv, _) in json.loads({json.dumps(json.dumps(cases))}).items():
            err = io.StringIO()
            start = time.process_time()
            with contextlib.redirect_stderr(err):
                rc = main(argv)
            heavy = sorted(m for m in ("scipy", "matplotlib", "lnrecency.numerics.simulate", "torch")
                           if m in sys.modules)
            out[name] = [rc, err.getvalue(), heavy, time.process_time() - start]
        print(json.dumps(out))
    """)
    env = {**os.environ, "LNRECENCY_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (_, needle) in cases.items():
        rc, err, heavy, cpu = got[name]
        assert rc == 2 and needle in err and err.count("\n") == 1, (name, err)
        assert heavy == [] and cpu < 1.0, (name, heavy, cpu)
