"""The claim catalogue: every claim declared once, with everything known before it is evaluated.

One :func:`declare` line per claim (in report order): its ID, the module under :mod:`lnrecency.claims` whose
``@claim`` evaluator decides it, a one-line title, each statement it decides with where that statement comes from
(:data:`SOURCES`), the command that fills it when the report does not (an experiment on trained or real models;
None: ``lnrecency verify`` and the report evaluate it), its family (the decisions its false-alarm rate is shared
with) and whether it is primary (a secondary claim's rows are intervals, never verdicts of their own).

This module imports nothing but the standard library (and the plans' declarations, standard library only too: a plan
may declare its claims with its tests, :func:`plan_declared`): the command line's help and ID checks, ``verify --list``,
the report's headline, the documentation pages and the notebooks read it without importing numpy, sympy or
torch, and without evaluating anything. An evaluator's result must decide one of its claim's declared statements,
word for word (:func:`statement_source` refuses any other). Adding a claim: its module, one :func:`declare` line
here, then ``python3 -m lnrecency.report.regenerate`` (docs/layout.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SOURCES", "SOURCE_SHORT", "FAMILIES", "Statement", "Declared", "S", "declare", "CATALOG", "DECLARED",
           "ids", "trained_ids", "declared", "statement_source", "result_source", "modules", "PLAN_CLAIMS",
           "plan_declared", "ANSWER", "answer_parts", "answer_ids", "row_matches", "THEIRS", "label", "ID_RULE",
           "id_parts", "module_covers", "checked_in_part"]

#: where a statement comes from (key -> the words the report counts it under), the paper's own first
SOURCES: dict[str, str] = {
    "paper": "the paper (v2 text)",
    "v1": "the paper's printed derivation (v1)",
    "seed002": "seed 002 (Farrell's essay)",
    "seed003": "seed 003 (Li et al.)",
    "ours": "the project's own formulations",
    "wu2025": "prior work (Wu et al., ICML 2025)",
}
#: the same sources in a word or two (the README's per-claim table)
SOURCE_SHORT: dict[str, str] = {"paper": "paper", "v1": "paper v1", "seed002": "seed 002", "seed003": "seed 003",
                                "ours": "ours", "wu2025": "Wu et al."}
#: the families a claim's decisions belong to (each with its own family-wise rate, docs/trained.md)
FAMILIES = ("parameter-free", "trained", "corpus", "thesis-text plan", "thesis-text plan v2", "thesis-text plan v3",
            "thesis-text plan v4", "thesis-text plan v5", "Wu et al. reproduction", "Wu et al. plan", "pretrained")


@dataclass(frozen=True)
class Statement:
    """One statement a claim decides: a short ``key`` (how its module names it), the ``source`` (a key of
    :data:`SOURCES`) and the ``text``, word for word as its verdict rows carry it."""

    key: str
    source: str
    text: str
    #: a universal statement (every layer, row, width ...) that the quick run checks on part of its domain only: no
    #: quick row of it is ever confirmed (issue 84, item 2; lnrecency.claims.registry makes any such row inconclusive,
    #: reason "partial", where its module has not named the part itself)
    quick_part: bool = False

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}; got {self.source!r}")
        if not isinstance(self.quick_part, bool):
            raise ValueError(f"quick_part must be True or False; got {self.quick_part!r}")
        object.__setattr__(self, "text", " ".join(self.text.split()))

    @property
    def group(self) -> str:
        """The words the report counts this statement under (:data:`SOURCES`)."""
        return SOURCES[self.source]


@dataclass(frozen=True)
class Declared:
    """A declared claim (:func:`declare`)."""

    id: str
    module: str  # under lnrecency.claims, e.g. "parameter_free.c3_residual"
    title: str
    statements: tuple[Statement, ...]
    command: str | None = None  # `lnrecency <command>` fills it (trained or real models); None: verify / report
    family: str = "parameter-free"
    primary: bool = True
    #: whether it shows a table, figure or notebook of its own: its claim module's namesake under
    #: lnrecency/report/views/ (checked at declaration and when the views load: a missing or misspelt one is an
    #: error naming it)
    view: bool = True

    @property
    def training(self) -> bool:
        """Whether its verdicts need an experiment the report does not run (trained models, a corpus)."""
        return self.command is not None

    @property
    def fills(self) -> str:
        """The command that evaluates it outside the report."""
        return f"lnrecency {self.command}" if self.command else f"lnrecency verify --claim {self.id}"

    def text(self, key: str) -> str:
        """The text of the statement ``key``."""
        for s in self.statements:
            if s.key == key:
                return s.text
        raise KeyError(f"claim {self.id} declares no statement {key!r}; it declares "
                       f"{', '.join(s.key for s in self.statements)}")


S = Statement


#: the one rule for a claim ID: capital letters, a number, and an optional ".number" ("T1", "TM3", "S2.0"); its
#: module's file name starts with the IDs it declares, lower case ("t1_theorem1", "p1_p7_...", "s2_s3_...")
ID_RULE = r"([A-Z]+)(\d+)(?:\.(\d+))?"


def id_parts(claim_id: str) -> tuple[str, int, int | None]:
    """(letters, number, sub-number or None) of a claim ID (ValueError naming :data:`ID_RULE`)."""
    import re

    m = re.fullmatch(ID_RULE, claim_id) if isinstance(claim_id, str) else None
    if m is None:
        raise ValueError(f"claim id must be capital letters, a number and an optional .number (T1, TM3, S2.0); "
                         f"got {claim_id!r}")
    return m.group(1), int(m.group(2)), int(m.group(3)) if m.group(3) is not None else None


def module_covers(module: str, claim_id: str) -> bool:
    """Whether a claim module's file name (``module``'s last part) names ``claim_id``: its leading ID tokens, one
    ID ("t1_theorem1"), ranges of one letter family each ("p1_p7_...": P1 to P7), an ID with its sub-number
    ("s2_0_premise": S2.0) or families ("s2_s3_...": every S2.x and S3.x)."""
    import re

    letters, number, sub = id_parts(claim_id)
    heads, exact = [], set()
    for tok in module.rpartition(".")[2].split("_"):
        if re.fullmatch(r"[a-z]+\d+", tok):
            heads.append(tok)
        elif re.fullmatch(r"\d+", tok) and heads:
            exact.add(f"{heads.pop()}.{tok}")
        else:
            break
    cid = claim_id.lower()
    split = [re.fullmatch(r"([a-z]+)(\d+)", h).groups() for h in heads]
    for a, b in zip(split, split[1:]):  # a range of one letter family: p1_p7 (several: tf1_tf3_tp1_tp4)
        if a[0] == b[0] == letters.lower() and sub is None and int(a[1]) <= number <= int(b[1]):
            return True
    if cid in exact or cid in heads:
        return True
    return sub is not None and f"{letters.lower()}{number}" in heads  # a family: s2_s3 covers S2.x


_PACKAGE = Path(__file__).resolve().parents[1]  # lnrecency/


def declare(claim_id: str, module: str, title: str, *statements: Statement, command: str | None = None,
            family: str = "parameter-free", primary: bool = True, view: bool = True) -> Declared:
    """One catalogue line: see the module docstring. The ID follows :data:`ID_RULE` and its module's name covers it
    (:func:`module_covers`), both checked here, when the claim is declared. ``view``: whether the claim shows
    anything of its own (the module of the same name under lnrecency/report/views/). The claim's module and its view
    module must exist: a missing or misspelt one is an error here, at import, naming it."""
    id_parts(claim_id)
    placeholder = id_parts(claim_id)[0] == PLACEHOLDER_LETTERS  # a test's claim, its module the test file
    if not isinstance(module, str) or not (placeholder or module_covers(module, claim_id)):
        raise ValueError(f"claim {claim_id}'s module {module!r} must be named by the IDs it declares (e.g. "
                         f"'parameter_free.{claim_id.lower().replace('.', '_')}_what_it_checks')")
    if not isinstance(view, bool):
        raise ValueError(f"claim {claim_id}: view must be True or False; got {view!r}")
    if not placeholder:  # its parts are there, named right: checked at import, before anything loads them
        for part, folder, wanted in (("claim", _PACKAGE / "claims", True),
                                     ("view", _PACKAGE / "report" / "views", view)):
            path = folder.joinpath(*module.split(".")).with_suffix(".py")
            if wanted and not path.is_file():
                raise ValueError(f"claim {claim_id}: its {part} module {str(path.relative_to(_PACKAGE.parent))!r} "
                                 f"is missing (or {module!r} is misspelt)" + ("; or declare view=False"
                                                                            if part == "view" else ""))
    if not statements:
        raise ValueError(f"claim {claim_id} declares no statement")
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}; got {family!r}")
    keys = [s.key for s in statements]
    if len(set(keys)) != len(keys):
        raise ValueError(f"claim {claim_id} declares a statement key twice: {keys}")
    return Declared(claim_id, module, title, tuple(statements), command, family, primary, view)


#: the letters no claim of the catalogue takes: tests declare placeholder claims under them ("X1"), so a real claim
#: can never collide with one (checked below, when the catalogue loads)
PLACEHOLDER_LETTERS = "X"

CATALOG: tuple[Declared, ...] = (
    declare("T1", "parameter_free.t1_theorem1", "Theorem 1: layer-2 recency with normalisation, isotropic embeddings",
            S("statement", "paper",
              "Theorem 1: with isotropic N(0, I_d/d) embeddings and stacked normalisation + causal self-attention, "
              "for d >> 1 the layer-2 scores S^(2) have recency bias (every row i >= 2).")),
    declare("C2", "parameter_free.c2_no_normalisation",
            "no normalisation: layer 2 flat, layers >= 3 earlier-token bias",
            S("flat", "ours",
              "Without normalisation (prior work's setting), the expected layer-2 scores are flat in the key j < i "
              "(a per-layer score, not Wu et al.'s rollout: see W1)."),
            S("earlier", "ours",
              "Without normalisation (prior work's setting), the expected scores of layers >= 3 have earlier-token "
              "bias (E S_ij < E S_ik for i > j > k) on every row i >= 3 (a score-level counterpart of Wu et al.'s "
              "rollout theorem, not the rollout itself: see W1).", quick_part=True)),
    declare("W1", "parameter_free.w1_rollout",
            "the paper's foil, in its own quantity: the attention rollout beside the scores",
            S("theorem41", "wu2025",
              "Wu et al. (ICML 2025), Theorem 4.1: under a causal mask the attention rollout R^(l) = P^(l) ... P^(1) "
              "concentrates on the first token with depth: R^(l)_i1 rises with l and the mass on the other tokens, "
              "1 - R^(l)_i1, shrinks by a factor rho < 1 per layer.", quick_part=True),
            S("side_by_side", "ours",
              "Scores and rollout at once: with normalisation, the layer-2 scores of the last row rise with the key "
              "(the paper's recency) while the layer-2 attention rollout of the same row falls with the key (Wu et "
              "al.'s primacy); the paper reverses a per-layer quantity, not the rollout."), view=False),
    declare("C3", "parameter_free.c3_residual", "residual connections weaken the bias but do not remove it",
            S("keeps", "ours",
              "With a residual connection (any gamma > 0) layer 2 still has recency bias on every row i >= 2.",
              quick_part=True),
            S("weakens", "ours",
              "A residual connection weakens the layer-2 recency bias: the gaps S_{i,i-1} - S_{i,1} and (S_{i,i-1} - "
              "S_{i,1}) / S_{i,1} are smaller than without residual on every row i >= 3.", quick_part=True)),
    declare("C4", "parameter_free.c4_anisotropy", "h(j) depends on alpha; is there recency for every alpha in [0, 1)?",
            S("h_depends", "ours",
              "The layer-1 output norm h(j) = |x_j^(1)| depends on the anisotropy alpha and strictly decreases in j "
              "for every alpha in [0, 1)."),
            S("recency", "ours",
              "Layer-2 recency bias holds for every alpha in [0, 1) (every row i >= 2).", quick_part=True),
            S("figure_setting", "ours",
              "The paper's h(j) curves (its Figures 2 and 5, concept/alpha.ipynb) are the d -> infinity limit of the "
              "setting its simulations use (concept/simulation.ipynb, authors-v2 convention).")),
    declare("C5", "parameter_free.c5_amplification", "anisotropy can amplify the bias: in which sense",
            S("s1", "paper",
              "Anisotropy can amplify the layer-2 recency bias (absolute gap: some alpha > 0 gives a larger gap than "
              "alpha = 0)."),
            S("s2", "ours",
              "The layer-2 recency bias grows with alpha on all of [0, 1) (absolute gap increasing in alpha)."),
            S("s3", "paper",
              "Anisotropy can amplify the layer-2 recency bias (relative gap: some alpha > 0 gives a larger gap than "
              "alpha = 0)."),
            S("s4", "ours",
              "The layer-2 recency bias grows with alpha on all of [0, 1) (relative gap increasing in alpha)."),
            S("s5", "paper",
              "Anisotropy can amplify the layer-2 recency bias (spread gap: some alpha > 0 gives a larger gap than "
              "alpha = 0)."),
            S("s6", "ours",
              "The layer-2 recency bias grows with alpha on all of [0, 1) (spread gap increasing in alpha)."),
            S("rp_amplifies", "ours",
              "In the authors' per-instance measure (layer-2 recency probability RP, their convention and widths), "
              "anisotropy amplifies recency: RP increases with alpha from 0 to 0.8.", quick_part=True)),
    declare("C6", "parameter_free.c6_deeper_layers", "layers 3..L with normalisation",
            S("statement", "ours",
              "With normalisation, the recency bias persists at deeper layers: every layer 3..L has recency bias on "
              "every row i >= 2.", quick_part=True)),
    declare("C7", "parameter_free.c7_output_norm", "seed 002: does the attention output shrink with position?",
            S("statement", "seed002",
              "Layer 1, alpha = 0: |o_i|^2 = sum_k P_ik^2 in the limit; the attention output shrinks with position, "
              "|o_i|^2 ~ 1/i (i |o_i|^2 -> 1) for long sequences or near-uniform attention."),
            S("shrink_to_zero", "seed002",
              "In the seed's scope (weakly correlated vectors, alpha = 0): the layer-1 attention output norm |o_i| "
              "tends to 0 with position i."),
            S("extension", "ours",
              "Beyond the seed's scope (our extension): with correlated tokens, alpha > 0, the layer-1 attention "
              "output norm |o_i| still tends to 0 with position i.")),
    declare("C8", "parameter_free.c8_output_variance",
            "seed 003: does output variance decay, and does post-attention normalisation fix it?",
            S("decays", "seed003",
              "The per-coordinate variance of the layer-1 attention output strictly decreases with position i."),
            S("vanishes", "seed003",
              "In the seed's scope (weakly correlated vectors, alpha = 0): the per-coordinate variance of the "
              "attention output vanishes as the sequence grows (i -> oo)."),
            S("extension", "ours",
              "Beyond the seed's scope (our extension): with correlated tokens, alpha > 0, the per-coordinate "
              "variance of the attention output still vanishes as i -> oo."),
            S("fixed", "seed003",
              "A normalisation right after attention keeps the per-coordinate variance fixed (= 1/d) at every "
              "position, removing the shift; without it the variance (layer-2 diagonal score) decays.")),
    declare("C9", "parameter_free.c9_finite_width", "per-instance behaviour and the rate in d",
            S("rate", "ours",
              "The finite-width expected score approaches the limit at rate 1/d, with the coefficient the "
              "finite-width theory predicts: E_d S - S_lim = c/d + O(1/d^2)."),
            S("finite", "ours",
              "The layer-2 ordering holds in expectation from a small finite width d* on: it is confirmed at d* and "
              "at every larger width tested, and at no smaller one (d* reported)."),
            S("instance_low", "ours",
              "In a single random draw at practical width (d = 64) the adjacent-key ordering S_{8,7} > S_{8,6} is "
              "unreliable: it holds with probability < 0.9."),
            S("instance_high", "ours",
              "In a single random draw at d = 10^4 the ordering S_{8,7} > S_{8,6} holds with probability > 0.99.")),
    declare("P1", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P1: layer-1 weights P_ij = f(i,j)/(e+(i-1)e^a), f = e on the diagonal, e^a below it.")),
    declare("P2", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P2: g(i) = 2(2ae + e^a(1 + a(2i-3))) / (e+(i-1)e^a).")),
    declare("P3", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P3: h(i)^2 = [(2e+(i-1)e^a)^2 + 2(2e+(i-1)e^a) e^a a (i-1) + e^(2a) (i-1)(1+(i-2)a)] / "
              "(e+(i-1)e^a)^2.")),
    declare("P4", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P4: S^(2)_ij = g(i)/(h(i)h(j)); Figure 1 prints, for n = 3, a = 0: S_21 = 0.154, S_31 = 0.132, S_32 = "
              "0.150.")),
    declare("P5", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P5: the numerator of h(j+1)^2 - h(j)^2 is quadratic in j and its three coefficients are negative for "
              "0 <= a < 1, so h strictly decreases.")),
    declare("P6", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P6 (no residual): g'(i) = (ea + e^a(1 + a(i-2))) / (e+(i-1)e^a), h'(i)^2 = (e^2 + 2e^(1+a) a (i-1) + "
              "e^(2a)(i-1)(1 + a(i-2))) / (e+(i-1)e^a)^2.")),
    declare("P7", "parameter_free.p1_p7_printed_formulas", "printed derivation line (symbolic)",
            S("s1", "v1",
              "P7 (no residual): h'(i+1)^2 - h'(i)^2 = (a-1) e^a (2e^3 - 2e^(2+a)(i-1) + e^(3a) i(i-1)) / ((e+i "
              "e^a)^2 (e+(i-1)e^a)^2) < 0.")),
    declare("P8", "parameter_free.p8_p9_printed_numeric", "printed: saturation of g(i)/h(i) for a != 0",
            S("p8", "v1",
              "P8: for a != 0 the layer-2 pattern becomes nearly independent of i (g(i)/h(i) saturates)."), view=False),
    declare("P9", "parameter_free.p8_p9_printed_numeric", "printed: LayerNorm with sqrt(d) vs d scaling",
            S("p9a", "v1",
              "P9: LayerNorm with d scaling (lam = 1) behaves like l2."),
            S("p9b", "v1",
              "P9: LayerNorm with sqrt(d) scaling (lam = sqrt(d)) sharpens the layer-1 softmax."),
            S("p9c_logits", "v1",
              "P9, read in attention logits: LayerNorm with sqrt(d) scaling weakens the layer-2 recency pattern (vs d "
              "scaling): the layer-2 gap S_87 - S_81 itself is smaller."),
            S("p9c_per_lam", "v1",
              "P9, read per unit of lam: LayerNorm with sqrt(d) scaling weakens the layer-2 recency pattern (vs d "
              "scaling): the layer-2 gap divided by lam is smaller."), view=False),
    declare("TM1", "trained.tm1_tm5_trained_decoders", "trained decoders: LayerNorm gives recency at layers >= 2",
            S("s1", "ours",
              "Trained NoPE decoders with LayerNorm (pre-LN, residual) show recency at every layer >= 2: the "
              "head-mean attention logit increases with the key position (the recency slope over training seeds is "
              "significantly above 0 at every layer >= 2, on the training distribution)."),
          command="experiments thesis", family="trained", primary=False),
    declare("TM2", "trained.tm1_tm5_trained_decoders", "trained decoders: no normalisation gives earlier-token bias",
            S("s1", "ours",
              "Trained NoPE decoders without normalisation show earlier-token bias at every layer >= 2 (the recency "
              "slope over training seeds is significantly below 0 at every layer >= 2, on the training "
              "distribution)."),
          command="experiments thesis", family="trained", primary=False),
    declare("TM3", "trained.tm1_tm5_trained_decoders", "trained decoders: RMSNorm behaves like LayerNorm",
            S("s1", "ours",
              "RMSNorm behaves like LayerNorm: at every layer >= 2 the per-instance RP of the two normalisations "
              "differs by less than 0.05 (equivalence by two one-sided tests over training seeds)."),
          command="experiments thesis", family="trained", primary=False),
    declare("TM4", "trained.tm1_tm5_trained_decoders", "trained decoders at initialisation: the random-W theory",
            S("s1", "ours",
              "At initialisation (independent N(0, s^2) weights) the expected logits carry no position: at every "
              "layer the recency slope is within +-0.5 / (n - 2) of 0 (less than 0.5 nat across a row), and E S_ij^2 "
              "= s^4 |y_i|^2 |y_j|^2 (their ratio within +-0.1 of 1); equivalence by two one-sided tests."),
          command="experiments thesis", family="trained"),
    declare("TM5", "trained.tm1_tm5_trained_decoders", "trained decoders: LayerNorm vs none at matched held-out loss",
            S("s1", "ours",
              "The recency slope of LayerNorm exceeds that of no normalisation at matched held-out loss (Welch's "
              "one-sided test over training seeds, at the loss every run of the architecture reached, interpolated "
              "between evaluations), at every layer >= 2."),
          command="experiments thesis", family="trained", primary=False),
    declare("S2.0", "trained.s2_0_premise",
            "is the later continuation the more frequent one in real text? (a premise seed 002 needs)",
            S("statement", "ours",
              "Seed 002's premise (our formulation): in real text, after .. [A][B] .. [A][C] .. [A] the next token "
              "is the later continuation [C] more often than the earlier [B] (both earlier [A]s within 16 tokens of "
              "the last; counted within files of a local corpus, default the running Python's standard library "
              "source, byte-level BPE with vocabulary 2048 trained on it)."),
          command="corpus-stats", family="corpus"),
    declare("S2.1", "trained.s2_s3_seed_experiments",
            "seed 002: does an induction head form in every seed? (prerequisite)",
            S("s1", "seed002",
              "Seed 002 (prerequisite): training forms an induction head in layer 1 in every training seed (the "
              "largest induction score among layer-1 heads reaches the stated threshold in each seed; the opposite "
              "shown when some seed's does not: the scores are read seed by seed)."),
          command="experiments seed002", family="trained"),
    declare("S2.2", "trained.s2_s3_seed_experiments",
            "seed 002, Figure 1: [C] beats [B] when the second [A] is near the end",
            S("s1", "seed002",
              "Seed 002, Figure 1: after <BOS> R [A][B] .. [A][C] .. [A], [C] is more probable than [B] when the "
              "second [A] is within 4 tokens of the end (positions 8-10; statistic: the mean of P(C) - P(B) over "
              "those positions)."),
          command="experiments seed002", family="trained"),
    declare("S2.3", "trained.s2_s3_seed_experiments",
            "seed 002, Figure 3: attention to [C] grows as the second [A] nears the end",
            S("s1", "seed002",
              "Seed 002, Figure 3: the induction head attends more to [C] relative to [B] the closer the second [A] "
              "is to the end (slope of attention(C) - attention(B) against the position of the second [A])."),
          command="experiments seed002", family="trained"),
    declare("S2.4", "trained.s2_s3_seed_experiments",
            "seed 002, Figures 4-5: does the induction head show recency on random sequences?",
            S("s1", "seed002",
              "Seed 002, Figures 4-5: on random sequences the induction head pays more attention to recent tokens "
              "(recency slope of its average attention over keys 1..i-1, mean over rows i >= 3, above 0)."),
          command="experiments seed002", family="trained"),
    declare("S2.5", "trained.s2_s3_seed_experiments",
            "seed 002, Figure 6: recency without positions, 7 of 8 layer-0 heads ablated",
            S("s1", "seed002",
              "Seed 002, Figure 6: the recency remains with position embeddings removed and all layer-0 heads but "
              "one ablated (the recency slope, averaged over the choices of the kept head, above 0)."),
          command="experiments seed002", family="trained"),
    declare("S2.6", "trained.s2_s3_seed_experiments", "seed 002, mechanism: layer-0 head outputs shrink with position",
            S("s1", "seed002",
              "Seed 002, mechanism: the output norm of layer-0 heads that do not attend strongly to themselves (mean "
              "P_ii < 0.5) shrinks with position (log-log slope of E|z_i|^2 against i + 1 below 0)."),
          command="experiments seed002", family="trained"),
    declare("S2.7", "trained.s2_s3_seed_experiments",
            "seed 002, mechanism: the law for an average of uncorrelated vectors",
            S("s1", "seed002",
              "Seed 002, mechanism: the law for an average of uncorrelated vectors, E sum_k P_ik^2 |v_k|^2 from the "
              "measured weights and values, explains the shrinkage (its log-log slope agrees with the measured one "
              "within 0.1: equivalence by two one-sided tests)."),
          command="experiments seed002", family="trained"),
    declare("S3.1", "trained.s2_s3_seed_experiments", "seed 003: attention-output variance decays with length",
            S("s1", "seed003",
              "Seed 003: the variance of the attention output (per coordinate) decays with sequence length in "
              "trained decoders (log-log slope against the test length below 0)."),
          command="experiments seed003", family="trained"),
    declare("S3.2", "trained.s2_s3_seed_experiments", "seed 003: post-attention LN reduces the hidden-state shift",
            S("s1", "seed003",
              "Seed 003: a LayerNorm right after attention reduces the shift of the hidden-state distribution at "
              "lengths beyond training (the next layer's input variance moves less from its training-length value "
              "with post-LN, or with both, than with pre-LN only)."),
          command="experiments seed003", family="trained"),
    declare("S3.3", "trained.s2_s3_seed_experiments", "seed 003: post-attention LN improves length extrapolation",
            S("s1", "seed003",
              "Seed 003: a LayerNorm right after attention improves length extrapolation (accuracy above the "
              "constant-answer baseline at 8x the training length, post-LN (or both) minus pre-LN, above 0; decided "
              "on the models that learned the task at the training length, accuracy >= 0.5, when at least 3 per "
              "placement did)."),
          command="experiments seed003", family="trained"),
    declare("TT1", "trained.tt1_tt4_thesis_text",
            "the thesis on text: LayerNorm language models show recency (plan H1)",
            S("s1", "ours",
              "The thesis on text (plan H1): in a NoPE language model with LayerNorm (2 attention-only layers, width "
              "64, trained on 3M tokens of the default corpus), layer 2's recency slope on held-out text is "
              "positive."),
          command="experiments thesis-text", family="thesis-text plan"),
    declare("TT2", "trained.tt1_tt4_thesis_text", "on text: LayerNorm above none at equal tokens (plan H2)",
            S("s1", "ours",
              "The thesis on text (plan H2): at equal tokens (3M), layer 2's recency slope on held-out text is "
              "larger with LayerNorm than with no normalisation."),
          command="experiments thesis-text", family="thesis-text plan"),
    declare("TT3", "trained.tt1_tt4_thesis_text", "on text: LayerNorm above none at matched loss (plan H3)",
            S("s1", "ours",
              "The thesis on text (plan H3): at matched held-out loss, layer 2's recency slope on held-out text is "
              "larger with LayerNorm than with no normalisation."),
          command="experiments thesis-text", family="thesis-text plan"),
    declare("TT4", "trained.tt1_tt4_thesis_text", "the thesis on text: RMSNorm equivalent to LayerNorm (plan H4)",
            S("s1", "ours",
              "The thesis on text (plan H4): RMSNorm gives the same layer-2 recency slope on held-out text as "
              "LayerNorm, within 0.0025 logit per key, at equal tokens."),
          command="experiments thesis-text", family="thesis-text plan"),
    declare("TV1", "trained.tv1_tv6_thesis_text_v2",
            "without BOS: LayerNorm shows recency on text (plan v2 Q1)",
            S("s1", "ours",
              "The thesis on text without BOS (plan v2 Q1): in the plan's NoPE language models with LayerNorm (2 "
              "attention-only layers, width 64, 3M tokens) trained and probed on windows without any BOS, layer 2's "
              "recency slope on held-out text (first key out) is positive."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TV2", "trained.tv1_tv6_thesis_text_v2",
            "without BOS: LayerNorm above none at equal tokens (plan v2 Q2)",
            S("s1", "ours",
              "The thesis on text without BOS (plan v2 Q2): trained and probed without any BOS, at equal tokens "
              "(3M), layer 2's recency slope on held-out text is larger with LayerNorm than with no "
              "normalisation."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TV3", "trained.tv1_tv6_thesis_text_v2",
            "without BOS: LayerNorm above none at matched loss (plan v2 Q3)",
            S("s1", "ours",
              "The thesis on text without BOS (plan v2 Q3): trained and probed without any BOS, at matched held-out "
              "loss, layer 2's recency slope on held-out text is larger with LayerNorm than with no normalisation "
              "(the plan expected it not to be)."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TV4", "trained.tv1_tv6_thesis_text_v2",
            "with BOS: layer 1's BOS share carries LayerNorm's recency (plan v2 Q4)",
            S("s1", "ours",
              "The mechanism (plan v2 Q4): in LayerNorm models trained with BOS first in every window, fixing layer "
              "1's share of attention to the first key at its own mean over the queries (content weights "
              "renormalised) lowers layer 2's recency slope on held-out text by more than half."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TV5", "trained.tv1_tv6_thesis_text_v2",
            "with BOS, no normalisation: the ablation does not halve the slope (plan v2 Q5)",
            S("s1", "ours",
              "The mechanism's control (plan v2 Q5): in models without normalisation trained with BOS first in "
              "every window, the same ablation of layer 1's first-key share does not lower layer 2's recency slope "
              "by half."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TV6", "trained.tv1_tv6_thesis_text_v2",
            "with BOS, RMSNorm equivalent to LayerNorm within 0.05 (plan v2 Q6)",
            S("s1", "ours",
              "With BOS (plan v2 Q6): RMSNorm gives the same layer-2 recency slope on held-out text as LayerNorm, "
              "within 0.05 logit per key, at equal tokens."),
          command="experiments thesis-text-v2", family="thesis-text plan v2"),
    declare("TC1", "trained.tc1_tc5_thesis_text_v3",
            "with BOS: does layer 2's QK read BOS? (plan v3 A1)",
            S("s1", "ours",
              "The read-out with BOS (plan v3 A1): in the plan's LayerNorm models trained with BOS first in every "
              "window, replacing layer 2's query-key product W_Q W_K^T by c I (c matching the intact logits' root "
              "mean square) removes more than half of layer 2's recency slope on held-out text."),
          command="experiments thesis-text-v3", family="thesis-text plan v3"),
    declare("TC2", "trained.tc1_tc5_thesis_text_v3",
            "with BOS: is the BOS direction the channel? (plan v3 B1)",
            S("s1", "ours",
              "The read-out with BOS (plan v3 B1): in the same LayerNorm models, removing from every key at layer 2's "
              "input its component along layer 1's head-mean value vector of BOS (after the normalisation's map) "
              "takes more than half of layer 2's recency slope."),
          command="experiments thesis-text-v3", family="thesis-text plan v3"),
    declare("TC3", "trained.tc1_tc5_thesis_text_v3",
            "with BOS: does the per-token scale carry it? (plan v3 C1)",
            S("s1", "ours",
              "The paper's mechanism with BOS (plan v3 C1): in the same LayerNorm models, fixing the normalisation's "
              "per-token scale at layer 2's input to its mean over the window's tokens 2..n removes more than half of "
              "layer 2's recency slope."),
          command="experiments thesis-text-v3", family="thesis-text plan v3"),
    declare("TC4", "trained.tc1_tc5_thesis_text_v3",
            "without BOS: does layer 2's QK carry it? (plan v3 A0)",
            S("s1", "ours",
              "Without BOS (plan v3 A0): in the plan's LayerNorm models trained and probed without any BOS, replacing "
              "layer 2's query-key product by c I removes more than half of layer 2's recency slope (first key out)."),
          command="experiments thesis-text-v3", family="thesis-text plan v3"),
    declare("TC5", "trained.tc1_tc5_thesis_text_v3",
            "without BOS: does the per-token scale carry it? (plan v3 C0)",
            S("s1", "ours",
              "The paper's mechanism without BOS (plan v3 C0): in the same no-BOS LayerNorm models, fixing the "
              "normalisation's per-token scale at layer 2's input removes more than half of layer 2's recency slope."),
          command="experiments thesis-text-v3", family="thesis-text plan v3"),
    declare("TU1", "trained.tu1_tu2_tn1_thesis_text_v4",
            "with BOS, no normalisation, the sink imposed: does layer 2 learn the slope?",
            S("s1", "ours",
              "Upstream (plan v4 U1): in the plan's NoPE language models trained with BOS first and no normalisation, "
              "with layer 1's share of attention to BOS set, row by row, to the LayerNorm models' profile, layer 2's "
              "recency slope on held-out text is above 0.0764 logit per key (half of the LayerNorm models' slope)."),
          command="experiments thesis-text-v4", family="thesis-text plan v4", view=False),
    declare("TU2", "trained.tu1_tu2_tn1_thesis_text_v4",
            "with BOS, LayerNorm, the sink clamped low: does the slope vanish?",
            S("s1", "ours",
              "The sink needed (plan v4 U2): in the plan's LayerNorm models trained with BOS first, with layer 1's "
              "share of attention to BOS clamped to the models without normalisation's level, layer 2's recency "
              "slope on held-out text is below 0.0764 logit per key."),
          command="experiments thesis-text-v4", family="thesis-text plan v4", view=False),
    declare("TN1", "trained.tu1_tu2_tn1_thesis_text_v4",
            "without BOS: LayerNorm above none at matched loss, with the power to tell?",
            S("s1", "ours",
              "Matched loss without BOS (plan v4 N1): in the plan's NoPE language models trained and probed without "
              "any BOS, each stopped where its held-out loss first reaches 4.25, layer 2's recency slope on held-out "
              "text is larger with LayerNorm than with no normalisation."),
          command="experiments thesis-text-v4", family="thesis-text plan v4", view=False),
    declare("TF1", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with BOS, no sink at all in layer 1: does the slope vanish?",
            S("s1", "ours",
              "No sink (plan v5 F1): in the plan's NoPE language models trained with BOS first and LayerNorm, "
              "with layer 1's share of attention to BOS held at 0 in every query row, layer 2's recency slope on "
              "held-out text is below 0.0764 logit per key (half of the intact LayerNorm models' slope)."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TF2", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with BOS, the sink flat at its own level: does the slope need the sink's fall?",
            S("s1", "ours",
              "Level or fall (plan v5 F2): in the plan's LayerNorm models trained with BOS first, with layer 1's "
              "share of attention to BOS held flat at the LayerNorm models' mean level (0.2483) in every query "
              "row, layer 2's recency slope on held-out text is below 0.0764 logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TF3", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with BOS, the sink flat at a low level: does the slope vanish?",
            S("s1", "ours",
              "A low flat sink (plan v5 F3): in the plan's LayerNorm models trained with BOS first, with layer "
              "1's share of attention to BOS held flat at the no-normalisation models' mean level (0.0580), layer "
              "2's recency slope on held-out text is below 0.0764 logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TP1", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with the sink set, is LayerNorm's centring alone enough?",
            S("s1", "ours",
              "Centring only (plan v5 P1): in the plan's NoPE language models trained with BOS first, layer 1's "
              "share of attention to BOS set to the LayerNorm models' profile and every normalisation replaced by "
              "its centring alone (no per-token scale), layer 2's recency slope on held-out text is above 0.0764 "
              "logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TP2", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with the sink set, is the per-token scale alone (RMSNorm) enough?",
            S("s1", "ours",
              "The per-token scale only (plan v5 P2): in the plan's models trained with BOS first, layer 1's "
              "share set to the LayerNorm models' profile and RMSNorm in place of LayerNorm, layer 2's recency "
              "slope on held-out text is above 0.0764 logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TP3", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with the sink set, does learning need the gradient through LayerNorm's scale?",
            S("s1", "ours",
              "The scale out of the gradient (plan v5 P3): in the plan's models trained with BOS first, layer 1's "
              "share set to the LayerNorm models' profile and LayerNorm's per-token scale held out of the "
              "gradient, layer 2's recency slope on held-out text is above 0.0764 logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TP4", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "with the sink set, is LayerNorm's learned gain needed?",
            S("s1", "ours",
              "The gain fixed (plan v5 P4): in the plan's models trained with BOS first, layer 1's share set to "
              "the LayerNorm models' profile and LayerNorm's gain fixed at 1, layer 2's recency slope on held-out "
              "text is above 0.0764 logit per key."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TS1", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "without BOS, does LayerNorm's slope keep growing after matched loss?",
            S("s1", "ours",
              "The stage (plan v5 T1): in the plan's NoPE language models trained without BOS and with LayerNorm, "
              "the mean over runs of each run's layer-2 recency slope on held-out text at 3.0M tokens minus its "
              "slope where its held-out loss first reached 4.25 is above 0."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TS2", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "without BOS, at equal tokens: LayerNorm above none?",
            S("s1", "ours",
              "Equal tokens (plan v5 T2): in the plan's NoPE language models trained without BOS for 3.0M tokens, "
              "layer 2's recency slope on held-out text is larger with LayerNorm than with no normalisation."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("TS3", "trained.tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5",
            "without BOS, at matched loss in the same runs: LayerNorm above none?",
            S("s1", "ours",
              "Matched loss, the same runs (plan v5 T3): in the plan v5 T runs, where each run's held-out loss "
              "first reached 4.25, layer 2's recency slope on held-out text is larger with LayerNorm than with no "
              "normalisation."),
          command="experiments thesis-text-v5", family="thesis-text plan v5", view=False),
    declare("W2", "trained.w2_w4_wu_icl",
            "Wu et al.'s Fig. 2 without normalisation: does the earlier item win?",
            S("statement", "wu2025",
              "Wu et al. (ICML 2025), Fig. 2: in their stack of causal attention layers without normalisation (NoPE) "
              "trained on their in-context classification task, of two items with identical content the earlier "
              "one's label is preferred: the accuracy gap acc(earlier is the answer) - acc(later is the answer) is "
              "positive for first-vs-middle and first-vs-last, at depth 2, depth 6 and depth 2 with residual."),
          command="experiments wu-icl", family="Wu et al. reproduction"),
    declare("W3", "trained.w2_w4_wu_icl",
            "does normalisation in Wu et al.'s stack lower the first-vs-last gap? (plan P1-P4)",
            S("lowers", "ours",
              "Inserting a normalisation (LayerNorm at depth 2, depth 6 and depth 2 with residual; RMSNorm at depth "
              "2) at every attention layer's input of Wu et al.'s stack lowers its first-vs-last accuracy gap: "
              "normalised minus none is below 0 (the Wu plan's P1-P4)."),
          command="experiments wu-icl", family="Wu et al. plan"),
    declare("W4", "trained.w2_w4_wu_icl",
            "with LayerNorm, does Wu et al.'s primacy turn over, and does the per-token rescaling carry the change? "
            "(plan P5, P6)",
            S("turns", "ours",
              "With LayerNorm inserted at depth 2, Wu et al.'s first-vs-last accuracy gap is below 0: the later item "
              "wins (the Wu plan's P5)."),
            S("mechanism", "ours",
              "The mechanism (the Wu plan's P6): in the depth-2 LayerNorm models, fixing every LayerNorm's per-token "
              "scale at its mean (centring, gain and bias kept) raises the first-vs-last accuracy gap."),
          command="experiments wu-icl", family="Wu et al. plan"),
    declare("R1", "trained.r1_pretrained_decoders",
            "real pretrained decoders: does recency remain with positions switched off?",
            S("statement", "ours",
              "Real pretrained decoders (our formulation): recency in the attention logits remains with the "
              "positional encoding switched off: on English text with every position id 0, the mean over layers of "
              "each layer's recency slope (exact pre-softmax logits, logit per key, the first key left out) is "
              "positive."),
          command="experiments pretrained", family="pretrained"),
)

#: the module that decides the claims a plan declares with its tests (lnrecency.claims.trained.plan_claims)
PLAN_CLAIMS = "trained.plan_claims"


def plan_declared(studies) -> tuple[Declared, ...]:
    """The claims declared with a plan's tests (``Test.question`` set; lnrecency.experiments.plans.declared): one
    per test, titled by its question, its one statement the test's ``says`` (the project's own), filled by
    ``lnrecency experiments NAME``, in the plan's family of its own, decided by :data:`PLAN_CLAIMS` (no module or
    view of its own)."""
    out = []
    for s in studies:
        for t in s.tests:
            if t.question:
                id_parts(t.claim)
                out.append(Declared(t.claim, PLAN_CLAIMS, t.question, (Statement("s1", "ours", t.says),),
                                    command=f"experiments {s.name}", family=f"plan {s.name}", view=False))
    return tuple(out)


def _studies():
    from lnrecency.experiments.plans.declared import STUDIES  # standard library only, as this module

    return STUDIES.values()


CATALOG = CATALOG + plan_declared(_studies())

#: id -> its declaration, in report order
DECLARED: dict[str, Declared] = {}
for _c in CATALOG:
    if _c.id in DECLARED:
        raise ValueError(f"claim id {_c.id!r} is declared twice in the catalogue")
    if id_parts(_c.id)[0] == PLACEHOLDER_LETTERS:
        raise ValueError(f"claim id {_c.id!r}: the letters {PLACEHOLDER_LETTERS!r} are the tests' placeholders; choose "
                         f"others")
    if any(c.module == _c.module and c.view != _c.view for c in DECLARED.values()):
        raise ValueError(f"claim {_c.id}: the claims of module {_c.module!r} must agree on view= (one view module "
                         f"each)")
    DECLARED[_c.id] = _c


def ids() -> tuple[str, ...]:
    """Every claim ID, in report order."""
    return tuple(DECLARED)


def trained_ids() -> tuple[str, ...]:
    """The IDs whose verdicts need an experiment the report does not run (trained models, a corpus)."""
    return tuple(cid for cid, c in DECLARED.items() if c.training)


#: each claim's part in the report's plain answer (issue 66), declared here with the catalogue and never in the
#: answer's code (lnrecency.report.headline, lnrecency.report.words.answer ask for a role): role -> ((claim, which
#: of its rows: None for all, "source:KEY" for the statements from one source, "statement:KEY" for one statement;
#: the words the answer says of it), ...), in the answer's order
ANSWER: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "theorem": (("T1", None, "for isotropic random tokens as d -> infinity (proved, and checked at finite d)"),),
    "printed": tuple((f"P{k}", None, "") for k in range(1, 10)),
    "boundary": (("C2", "statement:flat", "layer 2 is flat in expectation"),
                 ("C2", "statement:earlier", "deeper layers favour earlier tokens")),
    "mechanism": (("C2", None, "without normalisation, deeper layers favour earlier tokens as prior work says"),
                  ("C6", None, "with normalisation the recency persists at deeper layers"),
                  ("C5", "source:paper", "anisotropy can amplify it (the paper's words)")),
    "foil": (("W1", "source:ours", "the rollout beside the scores"), ("W1", "source:wu2025", "their Theorem 4.1"),
             ("W4", "statement:turns", "trained in their stack (depth 2) with LayerNorm"),
             ("W2", None, "their Fig. 2's gaps, trained in their stack")),
    # on trained and real models; the words are each claim's key in its plan
    "plan v2": tuple((f"TV{k}", None, f"Q{k}") for k in range(1, 7)),
    "plan v3": (("TC3", None, "C1"),),  # the paper's mechanism: the per-token scale fixed at the probe
    "plan v4": (("TU1", None, "U1"), ("TU2", None, "U2"), ("TN1", None, "N1")),
    "plan v5": (("TF1", None, "flat at 0"), ("TF2", None, "flat at LayerNorm's level"),
                ("TF3", None, "flat at none's level"), ("TP1", None, "centring only"), ("TP2", None, "RMSNorm"),
                ("TP3", None, "scale out of the gradient"), ("TP4", None, "gain fixed"), ("TS1", None, "the stage"),
                ("TS2", None, "equal tokens"), ("TS3", None, "matched loss")),
    "pretrained": (("R1", None, "both with RMSNorm, rotary positions, 4-bit"),),
}


def answer_ids(role: str) -> dict[str, str]:
    """A role's words (a plan's test key) -> its claim, for the answer's sentences that cite a plan's tests."""
    return {words: cid for cid, _, words in ANSWER[role]}


def answer_parts(role: str) -> tuple[tuple[str, str | None, str], ...]:
    """The (claim, which rows, words) of one role in the plain answer (:data:`ANSWER`)."""
    return ANSWER[role]


def row_matches(claim_id: str, statement: str, source: str, which: str | None) -> bool:
    """Whether a verdict row (its claim, statement and stored source words) is among ``which`` of its claim's rows
    (:data:`ANSWER`): by the catalogue's statement source or key; a row stored before its statement was reworded is
    placed by its stored source words."""
    if which is None:
        return True
    kind, _, key = which.partition(":")
    text = " ".join(str(statement).split())
    match = next((s for s in declared(claim_id).statements if s.text == text), None)
    if match is not None:
        return (match.source if kind == "source" else match.key) == key
    legacy = {"our formulation": "ours", "trained models, our formulation": "ours", "printed derivation": "v1",
              "prior work (Wu et al. 2025)": "wu2025"}.get(source, "paper")
    return kind == "source" and legacy == key


#: the sources whose statements are someone else's result: tested on models trained here (or real models), their
#: verdicts read "reproduced" / "the opposite shown"; the paper's and the project's own read confirmed / refuted
THEIRS = ("seed002", "seed003", "wu2025")
#: a decision -> its label for someone else's statement tested on our models, and back
_THEIR_LABEL = {"confirmed": "reproduced", "refuted": "the opposite shown"}
_OUR_LABEL = {v: k for k, v in _THEIR_LABEL.items()}


def label(claim_id: str, statement: str, verdict: str) -> str:
    """The verdict label of a row of ``claim_id`` deciding ``statement``, by whose statement it is (issue 75):
    "reproduced" / "the opposite shown" only for a seed text's or prior work's statement tested on trained or real
    models (:data:`THEIRS`), confirmed / refuted for the paper's and the project's own; a secondary claim's rows read
    "secondary"; "inconclusive" stays. A row stored before its statement was reworded is labelled by its claim's
    one source (ValueError when the claim has several)."""
    decl = declared(claim_id)
    if verdict in ("inconclusive", "secondary"):
        return verdict
    if not decl.primary:
        return "secondary"
    text = " ".join(str(statement).split())
    found = next((s for s in decl.statements if s.text == text), None)
    if found is None:
        statement_source(claim_id, text, stored=True)  # ValueError unless the claim has one source
        found = decl.statements[0]
    theirs = found.source in THEIRS and decl.training
    decision = _OUR_LABEL.get(verdict, verdict)
    if decision not in ("confirmed", "refuted"):
        raise ValueError(f"verdict must be confirmed, refuted, inconclusive, reproduced, the opposite shown or "
                         f"secondary; got {verdict!r}")
    return _THEIR_LABEL[decision] if theirs else decision


def declared(claim_id: str) -> Declared:
    """The declaration of ``claim_id`` (KeyError naming the IDs there are)."""
    try:
        return DECLARED[claim_id]
    except KeyError:
        raise KeyError(f"claim id must be one of {', '.join(DECLARED)}; got {claim_id!r}") from None


def checked_in_part(claim_id: str, text: str) -> bool:
    """Whether ``claim_id``'s declared statement ``text`` is one the quick run checks on part of its domain only
    (:attr:`Statement.quick_part`); False for a statement it does not declare."""
    text = " ".join(str(text).split())
    return any(s.quick_part for s in declared(claim_id).statements if s.text == text)


def statement_source(claim_id: str, text: str, *, stored: bool = False) -> str:
    """The :data:`SOURCES` words of ``claim_id``'s declared statement ``text`` (ValueError when the claim does not
    declare that statement: every verdict decides a declared statement). ``stored``: a row read from evidence
    written before the statement was reworded keeps its claim's source when all the claim's statements share one
    (so old evidence still renders); otherwise the same ValueError."""
    text = " ".join(str(text).split())
    for s in declared(claim_id).statements:
        if s.text == text:
            return s.group
    groups = {s.group for s in declared(claim_id).statements}
    if stored and len(groups) == 1:
        return groups.pop()
    raise ValueError(f"claim {claim_id} does not declare the statement {text[:80]!r}... (lnrecency/claims/"
                     f"catalog.py lists its statements)")


def result_source(claim_id: str, text: str) -> str:
    """The source words a verdict row carries (:attr:`lnrecency.inference.verdicts.ClaimResult.source`) for
    ``claim_id``'s declared statement ``text``, derived from the catalogue alone (issue 66: no claim module names
    its own source): a parameter-free claim's row by its statement's source (the paper and the seed texts: "seed
    text"; the first version: "printed derivation"; ours: "our formulation"; Wu et al.'s: prior work); a claim on
    trained or real models "trained models, our formulation", or "trained models, seed text" for a seed text's
    statement (Wu et al.'s statement: prior work; the corpus premise: "our formulation"). ValueError when the claim
    does not declare the statement."""
    text = " ".join(str(text).split())
    decl = declared(claim_id)
    key = next((s.source for s in decl.statements if s.text == text), None)
    if key is None:
        statement_source(claim_id, text)  # raises, naming the claim and the statement
    if key == "wu2025":
        return "prior work (Wu et al. 2025)"
    if decl.family == "parameter-free":
        return {"v1": "printed derivation", "ours": "our formulation"}.get(key, "seed text")
    if decl.family == "corpus":
        return "our formulation"
    return "trained models, seed text" if key in ("seed002", "seed003") else "trained models, our formulation"


def cost(command: str) -> dict | None:
    """The measured wall time of ``lnrecency <command>`` (lnrecency/data/costs.json: seconds, date, what), or None."""
    import json
    from importlib.resources import files

    return json.loads(files("lnrecency").joinpath("data/costs.json").read_text())["commands"].get(command)


def duration(seconds: float) -> str:
    """``seconds`` in words: '45 s', '16 min 26 s'."""
    seconds = int(round(seconds))
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60} s"


def cost_words(command: str, short: bool = False) -> str:
    """'about 16.5 min (16 min 26 s measured on 2026-11-26, 2 cores)', or 'minutes' when not measured; ``short``:
    '16 min 26 s (2026-11-26)' or 'about 8 min'."""
    c = cost(command)
    if c is None:
        return "minutes"
    if short:
        if c["date"] is None:
            return f"about {c['seconds'] / 60:.1f} min".replace(".0 min", " min")
        return f"{duration(c['seconds'])} ({c['date']})"
    about = f"about {c['seconds'] / 60:.1f} min".replace(".0 min", " min") if c["seconds"] >= 60 else \
        f"about {c['seconds']} s"
    if c["date"] is None:
        return f"{about} (an earlier, rounded measurement, 2 cores)"
    return f"{about} ({duration(c['seconds'])} measured on {c['date']}, 2 cores)"


def modules() -> tuple[str, ...]:
    """The claim modules, each once, in report order."""
    return tuple(dict.fromkeys(c.module for c in CATALOG))
