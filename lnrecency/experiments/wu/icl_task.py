"""Wu et al.'s in-context classification task (after Reddy 2024), as their ``data.py`` defines it, drawn with numpy.

A *world* (one per training seed) holds K class means mu_k ~ N(0, I_D / D^2) (their ``std = 1/D``), a label
c_k uniform over L labels for each class, and L label vectors ~ N(0, I_D / D^2). A training sequence has N items:
N / B distinct classes drawn without replacement, each repeated B times (burstiness), in a random order; item k is
the token (mu + eps eta) / sqrt(1 + eps^2), eta ~ N(0, I_D / D^2) fresh per token, followed by its class's label
vector; the query, last, is a fresh token of the class of an item drawn uniformly (so the answer is in context
B times). The target is the query class's label. Sequence: 2 N + 1 tokens, item k's content at position 2k,
its label at 2k + 1 (0-based), the query at 2N.

The *conflict* tests (their ``TestDataset``) use novel classes (fresh means and labels per sequence, so only
in-context copying can answer) and make two items' contents identical while their labels may differ: with the
answer at item a (first = 0, middle = N / 2, last = N - 1) and its content copied onto item b, the correct label
is item a's. Their accuracy gap acc(a, b) - acc(b, a) is positive when the model prefers the earlier of the two
(first-vs-middle, first-vs-last, middle-vs-last), Wu et al.'s Fig. 2.

Defaults are theirs (``train.py``): D = 64, K = 2048, L = 32, N = 8, B = 4, eps = 0.75 (``data_type gaussian``).
Every draw comes from the numpy Generator passed in, so a seed fixes the data. Tokens are float32 (the model's
precision); the per-token noise is drawn in float32 (the cost of a batch is then a fraction of a training step's).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["ICLTask", "World", "POSITIONS", "PAIRS"]

#: the items the conflict tests compare (0-based item index as a function of N)
POSITIONS = ("first", "middle", "last")
#: Wu et al.'s three gaps, each (earlier item, later item): acc(earlier answers, later copies it) - acc(reverse)
PAIRS = (("first", "middle"), ("first", "last"), ("middle", "last"))


@dataclass(frozen=True)
class World:
    """One training seed's classes: means (K, D), labels (K,), label vectors (L, D)."""

    means: np.ndarray
    labels: np.ndarray
    label_vectors: np.ndarray


@dataclass(frozen=True)
class ICLTask:
    """The task's sizes (module docstring); defaults are Wu et al.'s."""

    dim: int = 64
    classes: int = 2048
    labels: int = 32
    items: int = 8
    burst: int = 4
    eps: float = 0.75

    def __post_init__(self) -> None:
        check_int("dim", self.dim, minimum=2)
        check_int("labels", self.labels, minimum=2)
        check_int("items", self.items, minimum=3)
        check_int("burst", self.burst, minimum=1, maximum=self.items)
        if self.items % self.burst:
            raise ValueError(f"items must be a multiple of burst; got items={self.items}, burst={self.burst}")
        check_int("classes", self.classes, minimum=max(2, self.items // self.burst))
        check_real("eps", self.eps, low=0.0)

    @property
    def length(self) -> int:
        """Tokens per sequence: 2 N + 1."""
        return 2 * self.items + 1

    def item(self, position: str) -> int:
        """The 0-based item index of ``position`` (first, middle = N // 2, last)."""
        return {"first": 0, "middle": self.items // 2, "last": self.items - 1}[check_choice("position", position,
                                                                                             POSITIONS)]

    def world(self, rng: np.random.Generator) -> World:
        d = self.dim
        means = rng.normal(0.0, 1.0 / d, (self.classes, d)).astype(np.float32)
        labels = rng.integers(0, self.labels, self.classes)
        return World(means, labels, rng.normal(0.0, 1.0 / d, (self.labels, d)).astype(np.float32))

    def _order(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size, N) class slots 0 .. N/B - 1, each B times, in a random order per sequence."""
        slots = np.tile(np.arange(self.items // self.burst), (size, self.burst))
        return rng.permuted(slots, axis=1)

    def _tokens(self, means: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(size, N + 1, D) item tokens (mu + eps eta) / sqrt(1 + eps^2) from per-token means (size, N + 1, D)."""
        noise = rng.standard_normal(means.shape, dtype=np.float32) * np.float32(self.eps / self.dim)
        return (means + noise) * np.float32(1.0 / np.sqrt(1.0 + self.eps ** 2))

    def _sequence(self, items: np.ndarray, label_vecs: np.ndarray) -> np.ndarray:
        size = items.shape[0]
        x = np.empty((size, self.length, self.dim), dtype=np.float32)
        x[:, 0:2 * self.items:2] = items[:, :self.items]
        x[:, 1:2 * self.items:2] = label_vecs
        x[:, -1] = items[:, self.items]
        return x

    def _classes(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size, N / B) distinct class ids per sequence, uniform over the K classes."""
        m, k = self.items // self.burst, self.classes
        out = np.empty((size, m), dtype=np.int64)
        for c in range(m):  # sequential draws without replacement: class c uniform over those not yet drawn
            draw = rng.integers(0, k - c, size)
            for prev in np.sort(out[:, :c], axis=1).T:
                draw = draw + (draw >= prev)
            out[:, c] = draw
        return out

    def batch(self, world: World, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A training batch from ``world``: (x (size, 2N+1, D) float32, targets (size,) int64)."""
        check_int("size", size, minimum=1)
        cls = np.take_along_axis(self._classes(size, rng), self._order(size, rng), axis=1)  # (size, N) class ids
        answer = rng.integers(0, self.items, size)
        query = cls[np.arange(size), answer]
        ids = np.concatenate([cls, query[:, None]], axis=1)
        items = self._tokens(world.means[ids], rng)
        return self._sequence(items, world.label_vectors[world.labels[cls]]), world.labels[query].astype(np.int64)

    def _novel(self, size: int, rng: np.random.Generator):
        """Novel classes per sequence: slot order (size, N), means (size, N/B, D), labels (size, N/B)."""
        m = self.items // self.burst
        order = self._order(size, rng)
        means = rng.normal(0.0, 1.0 / self.dim, (size, m, self.dim)).astype(np.float32)
        return order, means, rng.integers(0, self.labels, (size, m))

    def plain(self, world: World, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Novel classes in the training layout (answer item uniform, no conflict): in-context accuracy."""
        order, means, labels = self._novel(size, rng)
        rows = np.arange(size)[:, None]
        answer = rng.integers(0, self.items, size)
        slots = np.concatenate([order, order[np.arange(size), answer][:, None]], axis=1)
        items = self._tokens(means[rows, slots], rng)
        return (self._sequence(items, world.label_vectors[labels[rows, order]]),
                labels[np.arange(size), slots[:, -1]].astype(np.int64))

    def conflict(self, world: World, answer: str, copy: str, size: int,
                 rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Wu et al.'s IC_<answer>_<copy> test: novel classes, the query of item ``answer``'s class, item
        ``answer``'s content copied onto item ``copy`` (their labels kept); the target is item ``answer``'s
        label."""
        a, b = self.item(answer), self.item(copy)
        if a == b:
            raise ValueError(f"answer and copy must be different items; got {answer!r} twice")
        order, means, labels = self._novel(size, rng)
        rows = np.arange(size)[:, None]
        slots = np.concatenate([order, order[:, a:a + 1]], axis=1)
        items = self._tokens(means[rows, slots], rng)
        items[:, b] = items[:, a]
        return (self._sequence(items, world.label_vectors[labels[rows, order]]),
                labels[np.arange(size), order[:, a]].astype(np.int64))
