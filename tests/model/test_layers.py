"""The shared layer definitions (lnrecency.model.layers): one definition serves the sampler and the limit,
the Gram sampler refuses a normalisation it cannot represent, and the install is namespaced."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from lnrecency.model.config import ModelConfig
from lnrecency.model.layers import NORMALISATIONS, Arithmetic, Normalisation, check_rotation_invariance
from lnrecency.numerics.forward import forward
from lnrecency.theory.limit import iterate_limit, limit_backend, limit_trajectory


@pytest.mark.parametrize("name", list(NORMALISATIONS))
def test_vector_map_and_gram_map_agree(name):
    """Gh from the Gram map equals the Gram of the vector map for uncentred vectors (any d)."""
    norm = NORMALISATIONS[name]
    rng = np.random.default_rng(0)
    h = rng.standard_normal((5, 40))
    u = np.zeros(40)  # no centring direction: the two maps must then agree exactly
    nh = norm.vectors(h, u) if not norm.centres else Normalisation("x", False, norm.scales).vectors(h, u)
    gh, _ = norm.gram(h @ h.T, Arithmetic())
    # the same numbers by two orders of float64 operations on O(1) entries: rounding ~1e-15
    np.testing.assert_allclose(gh, nh @ nh.T, rtol=1e-13, atol=1e-13)


def test_layernorm_vector_map_is_torch_layernorm_without_affine():
    """(h - mean) / std / sqrt(d) with the population std, written as a projection on u."""
    rng = np.random.default_rng(1)
    d = 11
    h = rng.standard_normal((3, d))
    ref = (h - h.mean(-1, keepdims=True)) / h.std(-1, keepdims=True) / np.sqrt(d)
    # entries are O(d^-1/2); float64 rounding of a few operations is < 1e-15 absolute
    np.testing.assert_allclose(NORMALISATIONS["layernorm"].vectors(h, np.full(d, d ** -0.5)), ref,
                               rtol=0, atol=1e-15)


def test_gram_sampler_refuses_a_normalisation_that_is_not_rotation_invariant():
    """A coordinate-wise normalisation (tanh-squash) breaks the reduced coordinates: refused, not run."""

    @dataclasses.dataclass(frozen=True)
    class Coordinatewise(Normalisation):
        def vectors(self, h, u):
            return np.tanh(h)

    bad = Coordinatewise("tanh", centres=False, scales=False)
    with pytest.raises(ValueError, match="does not commute with rotations fixing u"):
        check_rotation_invariance(bad)
    declared = Normalisation("declared", centres=False, scales=True, rotation_invariant=False)
    with pytest.raises(ValueError, match="not declared rotation invariant"):
        check_rotation_invariance(declared)
    for norm in NORMALISATIONS.values():
        check_rotation_invariance(norm)  # the shipped ones pass


def test_limit_can_start_from_any_gram():
    """iterate_limit from an explicit Gram matrix = the scores of that token configuration, exactly."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 50)) / np.sqrt(50)
    cfg = ModelConfig(norm="l2", residual=True, gamma=0.7, lam=2.0)
    direct = [s for s, _ in forward(x[None], cfg, 3, np.zeros(50))]
    layers = list(iterate_limit(6, 3, cfg, limit_backend(None, False), gram=x @ x.T))
    for s, lay in zip(direct, layers):  # 3 layers of float64 rounding on O(1) scores: ~1e-14
        np.testing.assert_allclose(np.tril(s[0]), np.nan_to_num(lay.scores), rtol=1e-12, atol=1e-14)
    assert limit_trajectory(6, 1, config=cfg).layers[0].gram.shape == (6, 6)


def test_namespaced_install_survives_a_users_numerics_folder(tmp_path):
    """A user's own numerics/ and theory/ folders in the working directory do not shadow the project."""
    for name in ("numerics", "theory"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise ImportError('the user s own package')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-m", "lnrecency.cli.app", "verify", "--claim", "P1"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "[P1] CONFIRMED" in out.stdout
    probe = subprocess.run([sys.executable, "-c", "import lnrecency.theory, lnrecency.numerics, sys; "
                            "import importlib.util as u; print(u.find_spec('theory') is None or "
                            "'site-packages' not in str(u.find_spec('theory').origin))"],
                           cwd="/", env=env, capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "True", probe.stderr


def test_float_causal_softmax_equals_the_masked_definition_even_when_the_unmasked_part_dominates():
    """The float softmax shifts each row by its full-row maximum; rows whose masked part would underflow under
    that shift (unmasked entries ~1000 larger) are recomputed with the masked maximum. Both cases against the
    definition exp(S_ij - max_{k<=i} S_ik) / sum, with a planted wrong mask (j < i) told apart."""
    import numpy as np

    from lnrecency.model.arithmetic import Arithmetic, causal_mask

    rng = np.random.default_rng(0)
    n = 6
    mask = causal_mask(n)
    s = rng.standard_normal((5, n, n)) * 3
    s[0] += np.triu(np.full((n, n), 1000.0), 1)  # the unmasked part dominates every row of draw 0
    w = Arithmetic().causal_softmax(s, mask)

    def definition(m):
        x = np.where(m, s, -np.inf)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    # the two compute exp at shifts differing by at most the row's range (|S| <= ~12 here, in the masked part):
    # rounding of exp(x) relative to |x| eps ~ 3e-15, plus the row sum's n eps; 1e-14 bounds both
    np.testing.assert_allclose(w, definition(mask), rtol=1e-14, atol=1e-300)
    assert np.all(np.isfinite(w))
    strict = np.tril(np.ones((n, n), dtype=bool), -1)
    strict[0, 0] = True
    assert not np.allclose(w, definition(strict))


def test_the_diagonal_shift_equals_the_definition_and_falls_back_when_its_premise_fails():
    """diagonal_is_max (tokens of equal length): the same softmax as the definition; a batch where the premise
    is false and exp overflows (S_ij - S_ii ~ 1000) is caught and recomputed with the general shift."""
    import numpy as np

    from lnrecency.model.arithmetic import Arithmetic, causal_mask

    rng = np.random.default_rng(1)
    n = 7
    mask = causal_mask(n)
    a = rng.standard_normal((4, n, 5))
    a /= np.linalg.norm(a, axis=-1, keepdims=True)
    s = 3.0 * a @ a.swapaxes(1, 2)

    def definition(s):
        x = np.where(mask, s, -np.inf)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    np.testing.assert_allclose(Arithmetic().causal_softmax(s, mask, diagonal_is_max=True), definition(s),
                               rtol=1e-14, atol=1e-300)
    bad = s.copy()
    bad[0, 5, 2] = 1000.0  # the premise fails: exp(S_52 - S_55) overflows
    w = Arithmetic().causal_softmax(bad, mask, diagonal_is_max=True)
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w, definition(bad), rtol=1e-14, atol=1e-300)
