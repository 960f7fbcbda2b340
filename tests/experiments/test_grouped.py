"""K seeds as one grouped model (lnrecency.experiments.decoders.grouped): each seed's slice is that seed's own
decoder, its loss and gradient are its own (checked against K separate Decoders and torch's cross-entropy), and
clipping is per seed."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.decoders.decoder import build  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.decoders.grouped import GroupedDecoder, HeadLoss, clip_per_seed  # noqa: E402

#: float32 rounding of a sum of up to 4096 products of magnitude ~1 (eps 1.2e-7 x sqrt(4096) x a factor 4 for
#: the order the batched kernels sum in): the bound where two float32 paths compute the same value
F32 = 4 * 64 * 1.2e-7


@pytest.mark.parametrize("norm, mlp", [("layernorm", False), ("rmsnorm", True), ("none", False)])
def test_each_seed_of_the_group_is_its_own_decoder(norm, mlp):
    cfg = DecoderConfig(vocab=50, d_model=16, n_layers=2, n_heads=2, context=12, mlp=mlp, norm=norm)
    g = GroupedDecoder(cfg, (3, 7))
    x = torch.from_numpy(np.random.default_rng(0).integers(0, 50, size=(2, 4, 12)))
    with torch.no_grad():
        out = g(x)
        for q, seed in enumerate((3, 7)):
            ref, _ = build(cfg, seed)(x[q])
            assert torch.allclose(out[q], ref, atol=F32, rtol=0)
            assert all(torch.equal(a, b) for a, b in zip(g.export(q).state_dict().values(),
                                                         build(cfg, seed).state_dict().values()))


def test_the_blocked_head_loss_equals_cross_entropy_in_value_and_gradient():
    torch.manual_seed(0)
    h = torch.randn(3, 700, 8, dtype=torch.float64, requires_grad=True)  # 700 rows: three blocks of 256
    w = torch.randn(3, 40, 8, dtype=torch.float64, requires_grad=True)
    t = torch.randint(0, 40, (3, 700))
    ours = HeadLoss.apply(h, w, t)
    (ours * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    gh, gw = h.grad.clone(), w.grad.clone()
    h.grad, w.grad = None, None
    ref = torch.stack([torch.nn.functional.cross_entropy(h[k] @ w[k].T, t[k]) for k in range(3)])
    (ref * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    # float64: eps 2.2e-16 times the 700-term sums over rows (1.6e-13), with a factor 600 for the cancellation
    # in the gradients' sums (rtol 1e-10) and an absolute floor for entries that cancel to about 0
    assert torch.allclose(ours, ref, rtol=1e-12) and torch.allclose(gh, h.grad, rtol=1e-10, atol=1e-14)
    assert torch.allclose(gw, w.grad, rtol=1e-10, atol=1e-14)
    wrong = HeadLoss.apply(h, w, (t + 1) % 40)  # a wrong target is not the same loss (the check can say no)
    assert not torch.allclose(wrong, ref)


def test_clipping_is_per_seed():
    p = torch.nn.Parameter(torch.zeros(2, 3))
    p.grad = torch.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0]])  # norms 5 and 0.5
    norms = clip_per_seed([p], 1.0)
    assert torch.allclose(norms, torch.tensor([5.0, 0.5], dtype=norms.dtype))
    assert torch.allclose(p.grad[0].norm(), torch.tensor(1.0), atol=8 * 1.2e-7)  # float32: a few roundings
    assert torch.allclose(p.grad[1], torch.tensor([0.3, 0.4, 0.0]))  # below the bound: untouched
