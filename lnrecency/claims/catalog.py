"""Every claim once: its evaluator module, its report tables and figures, and its notebook cells.

The registry behind ``lnrecency verify`` (:data:`lnrecency.claims.registry.CLAIMS`), the report's table and
figure lists (:data:`lnrecency.report.claim_tables.TABLES`, :data:`lnrecency.report.figures.FIGURES`) and
the notebooks (``notebooks/make_notebooks.py``) are all derived from :data:`CATALOG`, in its order. A new
claim is one :class:`Claim` entry here plus its evaluator module (and the builders its outputs name).

Builders are named, not imported (``"score_table"`` in :mod:`lnrecency.report.claim_tables`, ``"h_figure"``
in :mod:`lnrecency.report.figures`), so this module imports nothing heavy and has no import cycle with the
report, which reads verdicts from the registry.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["TableOutput", "FigureOutput", "Claim", "CATALOG", "NOTEBOOK_TITLES", "by_id"]


@dataclass(frozen=True)
class TableOutput:
    """A report table: file stem, one line for the index, builder ``claim_tables.<builder>(data, *args)``."""

    stem: str
    line: str
    builder: str
    args: tuple = ()

    def build(self, data: Any):
        return getattr(importlib.import_module("lnrecency.report.claim_tables"), self.builder)(data, *self.args)


@dataclass(frozen=True)
class FigureOutput:
    """Report figures: one line for the index, builder ``figures.<builder>(data)`` returning a list of
    ReportFigure, and ``stems``: the file stems it writes (a tuple, or the name of a function of the report
    settings in :mod:`lnrecency.report.figures` when they depend on them)."""

    line: str
    builder: str
    stems: tuple | str

    def build(self, data: Any) -> list:
        return getattr(importlib.import_module("lnrecency.report.figures"), self.builder)(data)

    def names(self, settings: Any) -> list[str]:
        if isinstance(self.stems, str):
            return getattr(importlib.import_module("lnrecency.report.figures"), self.stems)(settings)
        return list(self.stems)


@dataclass(frozen=True)
class Claim:
    """One claim: ``id`` ("T1", "C2".., "P1"..; "report" for the report's own outputs), the module under
    lnrecency.claims whose ``evaluate(quick, progress)`` returns its ClaimResults (None: no verdicts), a
    one-line description, and what it owns: report tables, report figures, notebook cells."""

    id: str
    module: str | None
    description: str
    tables: tuple = ()
    figures: tuple = ()
    notebook: str | None = None
    cells: tuple = ()  # (kind "md" | "code", source)
    training: bool = False  # needs trained models (torch): evaluated on request, see lnrecency.claims.registry


def show_table(expr: str) -> str:
    return f"display(Markdown({expr}.to_markdown()))"


def show_figure(expr: str) -> str:
    return f"fig = {expr}\nprint(fig.caption)\ndisplay(fig.figure)"


#: notebook name -> its opening Markdown cell (the claims' cells follow, in catalog order)
NOTEBOOK_TITLES: dict[str, str] = {
    "01_theorem1_layernorm_recency":
        "# Theorem 1: LayerNorm induces layer-2 recency\n\n"
        "Source: the paper's Theorem 1 (seed 000): with N(0, I/d) embeddings, stacked LayerNorm and "
        "causal attention, d >> 1, the layer-2 scores grow with the key index j. In the d -> infinity "
        "limit S^(2)_ij = g(i) / (h(i) h(j)) for j < i, so recency is exactly 'h strictly decreasing'.",
    "02_no_normalisation_baseline":
        "# Without normalisation: flat layer 2, earlier-token bias from layer 3\n\n"
        "Prior work (Wu et al., ICML 2025) finds that stacked causal attention alone biases scores "
        "toward earlier tokens. In the limit the layer-2 score without normalisation is g(i), "
        "independent of the key j (flat); the bias toward earlier keys appears at layer 3.",
    "03_residual_and_anisotropy":
        "# Residual connections and anisotropic embeddings\n\n"
        "The paper: residual connections weaken but do not remove the recency bias, and embedding "
        "anisotropy alpha (E<x_i, x_j> = alpha) 'can amplify it'. Below: h(j) for several alpha with "
        "and without residual (the second version's Figures 2 and 5), the layer-2 scores, and the "
        "gap S_(n,n-1) - S_(n,1) against alpha, in absolute and relative terms.",
    "04_deeper_layers_and_finite_width":
        "# Deeper layers, single instances and finite width\n\n"
        "What happens at layers 3 and 4 with LayerNorm; how often a single random draw at width d "
        "orders the scores like their expectation; and how fast E_d[S] approaches the limit.",
    "05_seeds_output_norm_and_variance":
        "# Seeds 002 and 003: shrinking outputs and vanishing variance\n\n"
        "Seed 002: the average of weakly correlated vectors gets shorter as more are averaged, so the "
        "attention output shrinks with position (in the limit |o_i|^2 = sum_k P_ik^2). Seed 003: the "
        "per-coordinate variance of the attention output decays with sequence length, and a "
        "LayerNorm right after attention keeps it fixed.",
    "06_printed_derivation":
        "# The authors' printed derivation, line by line (P1-P9)\n\n"
        "The first version of the paper (arXiv 2509.21042v1, Sec. 3.2 and App. A) printed the layer-1 "
        "weights, g(i), h(i)^2, the layer-2 score and the monotonicity arguments. Each line is checked "
        "against the project's own sympy derivation and exact limit.",
    "07_authors_simulations_and_boundaries":
        "# The authors' simulations, and where each claim holds\n\n"
        "The paper's Figure 1 rerun in the authors' own convention (authors-v2: their token scale, "
        "1/sqrt(E) score scale and residual, mapped exactly onto our model), with the recency "
        "probability RP +- SE of every panel beside our limit; then the boundary of recency in the "
        "sequence length, the decision in alpha a grid cannot make, and the phase diagram.",
    "08_trained_decoders":
        "# The thesis in trained decoders\n\n"
        "The theory assumes W_Q = W_K = W_V = I, no MLP and no training. Here NoPE decoders are trained on the "
        "induction task (3 architectures x LayerNorm / RMSNorm / none x 3 seeds) and probed with the theory's "
        "diagnostics at initialisation, at matched held-out loss and after training. Verdicts TM1-TM5 "
        "(source: trained models, our formulation).",
    "09_seed_experiments":
        "# Seeds 002 and 003, reproduced at small scale\n\n"
        "Seed 002's induction-head experiments (its Figures 1, 3-6 and the norm mechanism) and seed 003's "
        "vanishing variance and post-attention LayerNorm, on small decoders trained here on CPU with at least 3 "
        "training seeds. Verdicts S2.1-S2.7 and S3.1-S3.3 (source: trained models, our formulation); each says "
        "its scale.",
}

_PRINTED = "printed derivation line (symbolic)"

CATALOG: tuple[Claim, ...] = (
    Claim("report", None, "the report's own outputs",
          tables=(TableOutput("verdicts", "every claim with its verdict from `lnrecency verify`", "verdict_table"),
                  TableOutput("practical_widths", "every Monte Carlo mean check that supports a verdict, at the "
                                                  "authors' widths d = 16, 64, 256", "practical_widths_table"),
                  TableOutput("implementation_consistency", "the d = 10^12 checks: sampler against limit code "
                                                            "(no support at any width)",
                              "consistency_table"),
                  TableOutput("verdict_means", "every Monte Carlo mean the verdicts used, entry by entry (the runs "
                                               "they cite)", "verdict_means_table"),
                  TableOutput("verdict_orderings", "every paired Monte Carlo ordering the verdicts used, test by "
                                                   "test", "verdict_orderings_table"))),
    Claim("T1", "theorem1", "Theorem 1: layer-2 recency with normalisation, isotropic embeddings",
          tables=(TableOutput("t1_scores", "Theorem 1: the verdict's Monte Carlo means (row 8, layer 2) "
                                           "against limit + c/d at d = 16, 64, 256, 10^12", "score_table",
                              ("T1",)),
                  TableOutput("layer2_last_row", "layer-2 scores of the last row for every normalisation",
                              "last_row_table")),
          figures=(FigureOutput("expected-score heatmaps, layers 1-4, limit beside MC", "heatmap_figures",
                                "heatmap_names"),),
          notebook="01_theorem1_layernorm_recency",
          cells=(("md", "The closed forms, derived by sympy from the limit recursion (no residual, LayerNorm):"),
                 ("code", "from lnrecency.config import ModelConfig\n"
                          "from lnrecency.theory.closed_forms import closed_forms\n"
                          "cf = closed_forms(ModelConfig(norm='layernorm'))\n"
                          "display(cf.g, cf.h2, cf.score)"),
                 ("md", "The verdict's own Monte Carlo (row 8 of layer 2): exact limit, first-order coefficient c, "
                        "and per width (16, 64, 256, 10^12) the mean +- SE against limit + c/d:"),
                 ("code", show_table("claim_tables.score_table(data, 'T1')")),
                 ("md", "Expected scores per layer, limit beside simulation, for every alpha:"),
                 ("code", show_figure("figures.heatmap_figure(data, 'LayerNorm, lam = 1', dict(norm='layernorm'), "
                                      "residual=False)")))),
    Claim("C2", "baseline", "no normalisation: layer 2 flat, layers >= 3 earlier-token bias",
          tables=(TableOutput("c2_scores", "no normalisation: the verdict's Monte Carlo means (S_61, S_65, layers "
                                           "2 and 3) against limit + c/d at each width", "score_table", ("C2",)),),
          notebook="02_no_normalisation_baseline",
          cells=(("code", "from lnrecency.config import ModelConfig\n"
                          "from lnrecency.theory.closed_forms import closed_forms\n"
                          "cf = closed_forms(ModelConfig(norm='none'))\n"
                          "display(cf.score)  # no j: flat"),
                 ("code", show_table("claim_tables.score_table(data, 'C2')")),
                 ("code", show_table("claim_tables.last_row_table(data)")),
                 ("code", show_figure("figures.heatmap_figure(data, 'no normalisation', dict(norm='none'), "
                                      "residual=False)")))),
    Claim("C3", "residual", "residual connections weaken the bias but do not remove it",
          tables=(TableOutput("c3_scores", "residual vs no residual at layer 2: the verdict's Monte Carlo means "
                                           "against limit + c/d at each width", "score_table", ("C3",)),),
          notebook="03_residual_and_anisotropy",
          cells=(("code", show_table("claim_tables.score_table(data, 'C3')")),)),
    Claim("C4", "anisotropy", "h(j) depends on alpha; recency for every alpha in [0, 1)",
          tables=(TableOutput("c4_scores", "anisotropic embeddings (alpha = 0.9) at layer 2: the verdict's Monte "
                                           "Carlo means against limit + c/d at each width", "score_table", ("C4",)),
                  TableOutput("h_of_j", "h(j) against j for several alpha, without and with residual", "h_table"),
                  TableOutput("authors_panels", "the authors' figure in their convention: RP +- SE of every "
                                                "panel, our limit and first-order RP beside it", "authors_table")),
          figures=(FigureOutput("h(j) over j for several alpha, without and with residual", "h_figures",
                                ("h_of_j",)),
                   FigureOutput("the authors' simulation figure in their convention, RP on every panel, beside "
                                "our limit", "authors_figures", "authors_names")),
          notebook="03_residual_and_anisotropy",
          cells=(("code", show_table("claim_tables.score_table(data, 'C4')")),
                 ("code", show_table("claim_tables.h_table(data)")),
                 ("code", show_figure("figures.h_figure(data)")))),
    Claim("C5", "amplification", "anisotropy can amplify the bias: in which sense",
          tables=(TableOutput("c5_gap_vs_alpha", "recency gap S_(n,n-1) - S_(n,1) against alpha, absolute and "
                                                 "relative", "gap_table"),),
          figures=(FigureOutput("recency gap S_(n,n-1) - S_(n,1) against alpha", "gap_figures",
                                ("gap_vs_alpha",)),),
          notebook="03_residual_and_anisotropy",
          cells=(("md", "Whether anisotropy amplifies the bias depends on what is measured: compare the absolute "
                        "gap with the relative one, with and without residual."),
                 ("code", show_table("claim_tables.gap_table(data)")),
                 ("code", show_figure("figures.gap_figure(data)")))),
    Claim("C6", "deeper", "layers 3..L with normalisation",
          tables=(TableOutput("c6_scores", "deeper layers with LayerNorm: the verdict's Monte Carlo means (layer 3) "
                                           "against limit + c/d at each width", "score_table", ("C6",)),
                  TableOutput("bias_profiles", "Definition 1 row by row, layers 1-4, n = 32, several settings "
                                               "(exact limit)", "profile_table"),
                  TableOutput("phase_diagram", "where recency / earlier / mixed hold per layer 2-8 and sequence "
                                               "length (exact)", "phase_table_of")),
          figures=(FigureOutput("phase diagram: where recency / earlier-token bias / mixed rows hold, layers 2-8",
                                "phase_figures", ("phase_diagram",)),),
          notebook="04_deeper_layers_and_finite_width",
          cells=(("code", show_table("claim_tables.score_table(data, 'C6')")),
                 ("md", "Definition 1 row by row (exact limit, n = 32): which rows of which layers have recency, "
                        "earlier-token bias, flat or mixed scores."),
                 ("code", show_table("claim_tables.profile_table(data)")))),
    Claim("C7", "output_norm", "seed 002: the attention output shrinks with position",
          tables=(TableOutput("c7_output_norm", "seed 002: |o_i|^2 against position, limit vs MC",
                              "output_norm_table"),),
          figures=(FigureOutput("seed 002: output norm against position", "output_norm_figures",
                                ("seed002_output_norm",)),),
          notebook="05_seeds_output_norm_and_variance",
          cells=(("code", show_table("claim_tables.output_norm_table(data)")),
                 ("code", show_figure("figures.output_norm_figure(data)")))),
    Claim("C8", "variance", "seed 003: output variance decays; post-attention normalisation fixes it",
          tables=(TableOutput("c8_output_variance", "seed 003: output variance against sequence length, "
                                                    "with/without post-norm", "variance_table"),),
          figures=(FigureOutput("seed 003: output variance against sequence length", "variance_figures",
                                ("seed003_output_variance",)),),
          notebook="05_seeds_output_norm_and_variance",
          cells=(("code", show_table("claim_tables.variance_table(data)")),
                 ("code", show_figure("figures.variance_figure(data)")))),
    Claim("C9", "finite_width", "per-instance behaviour and the rate in d",
          tables=(TableOutput("c9_per_instance", "per-instance P(S_(n,n-1) > S_(n,1)) against d", "instance_table"),
                  TableOutput("c9_convergence_in_d", "E_d[S] - S_limit against d, fitted slope",
                              "convergence_table")),
          figures=(FigureOutput("finite-d convergence, log-log with fitted slope", "convergence_figures",
                                ("convergence_in_d",)),),
          notebook="04_deeper_layers_and_finite_width",
          cells=(("code", show_table("claim_tables.instance_table(data)")),
                 ("code", show_table("claim_tables.convergence_table(data)")),
                 ("code", show_figure("figures.convergence_figure(data)")))),
    Claim("P1", "printed", _PRINTED,
          tables=(TableOutput("printed_derivation", "the authors' printed lines P1-P9 with verdicts",
                              "printed_table"),),
          notebook="06_printed_derivation",
          cells=(("code", show_table("claim_tables.printed_table(data)")),)),
    *(Claim(f"P{q}", "printed", _PRINTED) for q in range(2, 8)),
    Claim("P8", "printed_numeric", "printed: saturation of g(i)/h(i) for a != 0"),
    Claim("P9", "printed_numeric", "printed: LayerNorm with sqrt(d) vs d scaling"),
    Claim("TM1", "trained", "trained decoders: LayerNorm gives recency at layers >= 2", training=True,
          tables=(TableOutput("trained_phases", "trained NoPE decoders: recency slope per layer with its "
                                                "t-interval over training seeds, phases, at init / matched "
                                                "loss / equal steps", "trained_table"),),
          figures=(FigureOutput("trained decoders: the authors' diagonal-normalised logit maps, phase per "
                                "layer with CIs, norm profiles against the law", "trained_figures",
                                "trained_names"),),
          notebook="08_trained_decoders",
          cells=(("md", "The parameter-free model is one configuration of the decoder (W = I, the theory's N): "
                        "its probe reproduces the theory's layer-2 recency."),
                 ("code", "from lnrecency.config import ModelConfig\n"
                          "from lnrecency.models.config import DecoderConfig\n"
                          "from lnrecency.models.decoder import build\n"
                          "from lnrecency.models.probe import ProbeSettings, probe_decoder\n"
                          "identity = build(DecoderConfig.identity_of(ModelConfig(norm='layernorm'), d=64, layers=2, "
                          "n=12), 0)\n"
                          "pr = probe_decoder(identity, ProbeSettings(n=12, sequences=512))\n"
                          "[(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers]"),
                 ("md", "A small NoPE decoder trained here (300 steps, a few seconds), probed the same way:"),
                 ("code", "from lnrecency.models.train import TrainSettings, train\n"
                          "cfg = DecoderConfig(vocab=64, d_model=64, n_layers=2, n_heads=4, context=32)\n"
                          "run = train(cfg, TrainSettings(steps=300, n=32, eval_every=100))\n"
                          "pr = probe_decoder(run.model, ProbeSettings(n=32, sequences=128))\n"
                          "print(run.log[-1])\n"
                          "[(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers]"),
                 ("md", "Trained NoPE decoders (`lnrecency experiments thesis`; cached). Each row: an "
                        "architecture, a normalisation, a stage, a layer; the recency slope's t-interval over "
                        "training seeds and the per-seed phases."),
                 ("code", show_table("claim_tables.trained_table(data)")),
                 ("code", "for fig in figures.trained_figures(data):\n    print(fig.caption)\n"
                          "    display(fig.figure)"))),
    Claim("TM2", "trained", "trained decoders: no normalisation gives earlier-token bias", training=True),
    Claim("TM3", "trained", "trained decoders: RMSNorm behaves like LayerNorm", training=True),
    Claim("TM4", "trained", "trained decoders at initialisation: the random-W theory", training=True),
    Claim("TM5", "trained", "trained decoders: LayerNorm vs none at matched held-out loss", training=True),
    Claim("S2.1", "seeds_trained", "seed 002: an induction head forms (prerequisite)", training=True,
          tables=(TableOutput("seed002", "seed 002 at small scale: each statistic over training seeds, with its "
                                         "verdict", "seed002_table"),),
          figures=(FigureOutput("seed 002 at small scale: Figure 1 (P(B), P(C)), Figure 3 (attention to B, C), "
                                "Figures 4-6 (the induction head's average attention), the layer-0 norm "
                                "mechanism", "seed002_figures", "seed002_names"),),
          notebook="09_seed_experiments",
          cells=(("md", "Seed 002 on a 2-layer attention-only decoder trained here (`lnrecency experiments "
                        "seed002`; cached): each statement's statistic over training seeds."),
                 ("code", show_table("claim_tables.seed002_table(data)")),
                 ("code", "for fig in figures.seed002_figures(data):\n    print(fig.caption)\n"
                          "    display(fig.figure)"))),
    *(Claim(f"S2.{q}", "seeds_trained", text, training=True) for q, text in (
        (2, "seed 002, Figure 1: [C] beats [B] when the second [A] is near the end"),
        (3, "seed 002, Figure 3: attention to [C] grows as the second [A] nears the end"),
        (4, "seed 002, Figures 4-5: the induction head's recency on random sequences"),
        (5, "seed 002, Figure 6: recency without positions, 7 of 8 layer-0 heads ablated"),
        (6, "seed 002, mechanism: layer-0 head outputs shrink with position"),
        (7, "seed 002, mechanism: the law for an average of uncorrelated vectors"))),
    Claim("S3.1", "seeds_trained", "seed 003: attention-output variance decays with length", training=True,
          tables=(TableOutput("seed003", "seed 003 at small scale: variance, shift and accuracy per test length "
                                         "over training seeds, with verdicts", "seed003_table"),),
          figures=(FigureOutput("seed 003 at small scale: attention-output variance and sum_k P_ik^2 against "
                                "length, the hidden-state shift, accuracy", "seed003_figures", "seed003_names"),),
          notebook="09_seed_experiments",
          cells=(("md", "Seed 003 on decoders with pre-LN, post-attention LN or both, trained here "
                        "(`lnrecency experiments seed003`; cached)."),
                 ("code", show_table("claim_tables.seed003_table(data)")),
                 ("code", "for fig in figures.seed003_figures(data):\n    print(fig.caption)\n"
                          "    display(fig.figure)"))),
    Claim("S3.2", "seeds_trained", "seed 003: post-attention LN reduces the hidden-state shift", training=True),
    Claim("S3.3", "seeds_trained", "seed 003: post-attention LN improves length extrapolation", training=True),
    Claim("boundaries", None, "where each claim holds: the authors' setting, boundaries in n and alpha, phases",
          notebook="07_authors_simulations_and_boundaries",
          cells=(("code", "from lnrecency.conventions import convention_record\n"
                          "convention_record('authors-v2', norm='layernorm', residual=True, alpha=0.5, d=16)"),
                 ("md", "Figure 1 of the paper, panel by panel (the report's quick sample size; "
                        "`lnrecency reproduce` runs every figure at 400 000 draws per setting):"),
                 ("code", show_table("claim_tables.authors_table(data)")),
                 ("md", "Where recency holds in the sequence length (exact limit, first failing length = first "
                        "failing row), for LayerNorm with a residual of weight 8 (the authors' simulation weight "
                        "at d = 64):"),
                 ("code", "from lnrecency.theory.boundary import boundary\n"
                          "[b.to_json() for b in boundary(4, 400, norm='layernorm', residual=True, gamma=8.0, "
                          "first_layer=3)]"),
                 ("md", "'Anisotropy can amplify it', absolute gap, no residual, lam = 1, n = 64: the sign of the "
                        "derivative at alpha = 0 and the interval of alpha where the gap exceeds its alpha = 0 "
                        "value (root finding):"),
                 ("code", "from lnrecency.config import ModelConfig\n"
                          "from lnrecency.theory.anisotropy import decide_alpha\n"
                          "decide_alpha(64, ModelConfig(lam=1.0), 'absolute').to_json()"),
                 ("code", show_figure("figures.phase_figures(data)[0]")))),
)


def by_id(claim_id: str) -> Claim:
    for c in CATALOG:
        if c.id == claim_id:
            return c
    raise ValueError(f"claim id must be one of {', '.join(c.id for c in CATALOG)}; got {claim_id!r}")
