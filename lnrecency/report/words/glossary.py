"""The glossary as data (issue 75): every term the README, the report and the documentation pages use, with the
pattern that finds its use, a few plain words (the README's "Words:" line) and its definition. docs/glossary.md is
generated from it (:func:`page`, by ``python3 -m lnrecency.report.regenerate``); tests/report/test_glossary.py checks
both directions: every term defined here is used on a page, and every term of the project's vocabulary a page uses is
defined here. Standard library only.
"""
from __future__ import annotations

from dataclasses import dataclass

from lnrecency.inference.qualifiers import REASONS

__all__ = ["Term", "TERMS", "page", "term"]


@dataclass(frozen=True)
class Term:
    """One glossary entry: its ``names`` (the first is its heading), the regular expression ``pattern`` that finds
    its use in a page, ``gloss`` (a few plain words; "" when the README never glosses it) and ``definition``."""

    names: tuple[str, ...]
    pattern: str
    gloss: str
    definition: str


_REASONS = ", ".join(REASONS.values())

TERMS: tuple[Term, ...] = (
    Term(("confirmed", "refuted", "inconclusive"), r"\bconfirmed\b|\brefuted\b|\binconclusive\b", "",
         "The verdicts on the paper's statements and the project's own, each with one meaning on every page. "
         "Confirmed: the statement is shown, by an exact result or a significant test in its direction (an "
         "equality: an equivalence test within a margin fixed in advance). Refuted: its opposite is shown the same "
         f"way. Inconclusive: not decided either way, for one of these reasons: {_REASONS}. A statement that can be "
         "read two ways is split into its readings, each decided."),
    Term(("reproduced", "the opposite shown"), r"\breproduced\b|the opposite shown", "",
         "The same decisions when the statement is someone else's result (a seed text's or prior work's) tested on "
         "models trained here or on real models: reproduced = confirmed, the opposite shown = refuted (significant "
         "in the opposite direction). Never used for the paper's or the project's own statements. Where the sign is "
         "reproduced but the size is not, the row says \"direction only\"."),
    Term(("secondary", "secondary interval"), r"\bsecondary\b",
         "an interval with its side of 0, no verdict",
         "A result reported as an interval with the side of the boundary it lies on, never as a verdict: counted "
         "apart from the verdicts."),
    Term(("split",), r"\bsplit\b", "different verdicts in different settings",
         "A claim whose rows differ: \"split: 2 confirmed, 1 refuted\" counts each verdict; its plain words say "
         "where each holds."),
    Term(("by a hair", "decided by a hair"), r"\bby a hair",
         "twice its smaller one-sided p within a factor of 2 of its level in Holm's order",
         "A plan test whose pair p (twice the smaller of its two one-sided p-values) lies within a factor of 2 of its "
         "level in Holm's step-down order, on either side: a small change of the data would have turned the "
         "decision. A test below its level that the step-down never reached (it stopped at an earlier test) is "
         "marked too: its finding says so. Its cell says \"by a hair\" (the row keeps the pair p and the level); "
         "the answer says an undecided one is \"leaning for it\" or \"leaning against it\": the side its smaller "
         "one-sided p favours. The same factor 2 applies to a Monte Carlo step decided against an empirical "
         "Bernstein threshold at a fixed false-alarm rate (C5's RP along alpha): by a hair when halving or doubling "
         "that rate turns its verdict; and a measured time within a tenth of its goal is met or missed by a hair."),
    Term(("seed text", "seed 002", "seed 003"), r"\bseed text|\bseed 00\d", "",
         "The sources the project was given (`../shared/seeds/`): the paper's abstract, TL;DR, Theorem 1 and "
         "figure captions (seeds 000, 001), Eoin Farrell's essay (seed 002) and Li, Boduljak and Zhou (seed 003)."),
    Term(("our formulation", "the project's own formulations"), r"our formulation|own formulations", "",
         "A precise statement written by this project for something the paper reports but whose exact wording is "
         "not available (Definition 1, Propositions 1-3, the claims C2-C9), or for a test on models trained here. "
         "Verdicts say when they rest on it, and are counted apart."),
    Term(("printed derivation",), r"printed derivation", "",
         "The first version of the paper (arXiv 2509.21042v1, Sec. 3.2 and App. A), whose lines P1-P9 are checked "
         "against the project's own sympy derivation."),
    Term(("recency bias", "earlier-token bias", "flat"), r"\brecency\b|earlier-token|\bflat\b", "",
         "Definition 1 (our formulation): on row i, E S_ij > E S_ik for every k < j < i; \"earlier-token bias\" is "
         "the reverse; \"flat\" means equal."),
    Term(("d",), r"\bd = \d|\bd \d|\bwidths?\b", "the width",
         "The width of the embeddings (the model's dimension); the paper's limit is d -> infinity."),
    Term(("lam",), r"\blam\b", "the scores' scale before the softmax",
         "The scale of the attention scores before the softmax (lam = 1: \"d scaling\"; lam = sqrt(d): \"sqrt(d) "
         "scaling\", of one width d only)."),
    Term(("sqrt(d) scaling",), r"sqrt\(d\)", "lam = sqrt(d) of one width",
         "lam = sqrt(d): the usual 1/sqrt(d) attention scaling for the normalised embeddings of this model; lam = 8 "
         "is it for d = 64 only."),
    Term(("alpha",), r"\balpha\b", "the tokens' correlation (anisotropy)",
         "The anisotropy of the embeddings: E<x_i, x_j> = alpha for i != j (0: isotropic)."),
    Term(("residual", "gamma"), r"\bgamma\b|\bresidual\b", "each layer adds its input back to its output",
         "With a residual connection each layer adds gamma times its input to the attention output (gamma = 1 the "
         "usual)."),
    Term(("row",), r"\brows? \d|\brow i\b|\bevery row\b", "the query position read",
         "Row i of a score matrix: the scores of query i over the keys j <= i."),
    Term(("logit per key", "slope"), r"logit per key|\bslope", "a query's logit rise per later key (> 0: recency)",
         "The recency slope: the least-squares slope of a query's attention logits against the key's position, in "
         "logit per key, averaged over queries (the first key, the attention sink, left out and reported apart)."),
    Term(("BOS",), r"\bBOS\b", "a beginning-of-sequence token first in every window",
         "A beginning-of-sequence token placed first in every training and probe window; its key is the attention "
         "sink."),
    Term(("sink", "attention sink"), r"\bsink\b", "the first key drawing a large share of attention",
         "The first key (BOS, where there is one) drawing a large share of every query's attention in layer 1; its "
         "share is the quantity plan v2 fixed and plan v4 imposes or clamps. Slopes leave the first key out and "
         "report its share apart."),
    Term(("none",), r"\bnone\b", "no normalisation",
         "In the trained models' rows: no normalisation (the comparison arm of LayerNorm and RMSNorm)."),
    Term(("equal tokens",), r"equal tokens", "models compared after the same number of training tokens",
         "Two ways to compare normalisations: after the same number of training tokens (equal tokens), or at the same "
         "held-out loss (matched loss)."),
    Term(("matched loss", "matched held-out loss"), r"matched (held-out )?loss",
         "models compared where each first reaches the same held-out loss",
         "Each arm read where its held-out loss first reaches a target (plan v4: 4.25): the same loss, at different "
         "numbers of tokens."),
    Term(("held flat", "flat share"), r"held flat|flat share",
         "layer 1's share to the first key set to one value in every query row",
         "Plan v5's F arms: layer 1's share of attention to the first key set to the same value for every query "
         "(0, the LayerNorm models' mean or the none models' mean), during training and at the probe; the other keys "
         "share the rest in the proportions of their own softmax. It keeps the share's level and removes its fall "
         "with position."),
    Term(("the LayerNorm profile",), r"LayerNorm profile",
         "layer 1's share set, row by row, to the LayerNorm models' published one",
         "Each query row's share of attention to the first key in plan v2's BOS LayerNorm models (mean over heads and "
         "seeds), set in layer 1 during training and at the probe (plan v4's U1, plan v5's parts arms)."),
    Term(("centring only",), r"centring only", "LayerNorm's centring without its per-token scale",
         "Plan v5's first part of LayerNorm, in place of every normalisation of the model: y = g (h - mean h) + b, "
         "no per-token scale. RMSNorm is the other part: the per-token scale without the centring."),
    Term(("the scale out of the gradient",), r"scale out of the gradient",
         "LayerNorm whose per-token scale is not learned through",
         "Plan v5's LayerNorm with its per-token 1/sigma held out of the gradient (detached): the same forward, but "
         "training cannot learn through the scale's dependence on the stream."),
    Term(("the gain fixed",), r"gain fixed", "LayerNorm whose gain stays 1",
         "Plan v5's LayerNorm with its per-coordinate gain fixed at 1 (its bias still learned)."),
    Term(("score step",), r"score step", "the change of a row's score from one key to the next, in logits",
         "S_i,j+1 - S_ij: how a query's score changes from key j to key j + 1; C2's failure is its largest value "
         "where the earlier-token order breaks."),
    Term(("positions off",), r"positions off",
         "every position id set to 0 (no positional encoding; the causal mask remains)",
         "A pretrained model probed with every position id 0, so that its rotary positions carry nothing: out of the "
         "distribution it was trained on (its perplexity says by how much)."),
    Term(("rotary positions",), r"rotary positions", "position given by rotating each query and key by its position",
         "Rotary position embeddings (RoPE): each query and key vector is rotated by an angle proportional to its "
         "position, so that a score depends on the distance between them. SmolLM2 and Gemma 3 use them; with every "
         "position id 0 (positions off) the rotation is the same for all."),
    Term(("4-bit",), r"\b4-bit", "weights stored in about 4 bits each (quantised)",
         "The pretrained models' weights as their GGUF files store them, quantised to about 4 bits per weight (Q4_1, "
         "Q4_K_M); transformers turns them into float32 when it loads them, so the probe's numbers are those of the "
         "quantised model, not of the original weights."),
    Term(("random control",), r"random control", "the same probe on random tokens instead of text",
         "The neutral control of the pretrained models' probe: windows of tokens drawn uniformly over the content "
         "tokens (no special token inside), probed exactly as the text is; a sign it shares with the text is not "
         "specific to text."),
    Term(("perplexity",), r"\bperplexity", "how well the model predicts the text (lower: better)",
         "exp of the mean next-token loss on the text windows; its ratio with positions off to positions on says how "
         "far outside its training the model is probed."),
    Term(("interval", "95 % interval"), r"\[[+-]?\d[\d.]*, [+-]?\d", "",
         "A bracket [low, high] after an estimate is its 95 % interval, not adjusted for the family: a family decided "
         "by Holm can leave a test whose interval excludes 0 undecided (\"not significant after Holm\")."),
    Term(("fitted bonus", "b"), r"fitted bonus|\bb = \d|\(b \d", "",
         "The sink theory's logit bonus on the first key, b, fitted so that the theory's layer-1 share of the first "
         "key matches a trained cell's (plans v2 and v3)."),
    Term(("not significant after Holm",), r"not significant after Holm",
         "significant alone, not within its family; the interval beside it is not adjusted for the family",
         "A test whose own 95 % interval excludes its boundary but whose p is above the level Holm's step-down, "
         "deciding its family together, gives it: undecided. The interval shown beside it is the test's own, "
         "unadjusted for the family. (A test Holm never reached, because a test before it failed, reads \"Holm "
         "stopped before it\"; one that the doubling of its p alone left undecided, \"undecided by the pair "
         "rule\".)"),
    Term(("its reading", "reading"), r"\bits reading\b|'s reading\b",
         "what the plan said, before its runs, this outcome would mean",
         "A pre-registered plan writes, for each outcome of each test, the sentence it will mean (its reading), "
         "hashed with the plan before any run; the answer quotes the reading of the outcome that came. A reading "
         "that speaks of a recorded quantity carries it as a condition, checked on the rows."),
    Term(("rows sampled",), r"rows sampled", "for each lam and failing layer, its first failing row at the middle of "
         "its failing alpha interval (not a bound)",
         "Where C2's failure is measured: for each lam and each layer whose earlier-token order fails, the first "
         "failing row at the middle of its first failing alpha interval (six rows in all); the failing region's other "
         "rows are not searched, so the sizes read there bound nothing."),
    Term(("undecided by the pair rule",), r"undecided by the pair rule",
         "its one-sided p passes its Holm level; doubled, as the plan's rule asks, it does not",
         "A plan tests each statement and its opposite at once (the pair rule: the smaller one-sided p, doubled, "
         "against the Holm level). A test whose smaller one-sided p is within its level but twice that p is not is "
         "undecided by that doubling alone: one-sided, the same data would have decided it."),
    Term(("Holm stopped before it",), r"Holm stopped before it",
         "its pair p is within the Holm level it would have had, but a test before it in Holm's order did not pass",
         "Holm's step-down decides a family's tests in order of their pair p and stops at the first that fails its "
         "level: a test after it stays undecided whatever its own pair p."),
    Term(("unadjusted",), r"\bunadjusted\b", "the interval is the test's own, not adjusted for its family",
         "Beside a test undecided in its family (not significant after Holm, undecided by the pair rule, Holm "
         "stopped before it), the 95 % interval is the test's own: that it excludes its boundary (or lies inside its "
         "margin) does not decide the test."),
    Term(("Holm",), r"\bHolm", "several tests decided together at one false-alarm rate",
         "Holm's step-down procedure: a family of tests decided together at a family-wise rate; a test can be "
         "significant alone and still stopped because a test before it was not."),
    Term(("rollout",), r"\brollout\b", "attention weights multiplied across layers",
         "The attention rollout R^(l) = P^(l) ... P^(1) (Abnar and Zuidema): Wu et al.'s quantity."),
    Term(("per-layer factor",), r"per-layer factor", "",
         "In Wu et al.'s Theorem 4.1, the factor rho < 1 by which the rollout's mass on the other tokens shrinks per "
         "layer."),
    Term(("NoPE",), r"\bNoPE\b", "no positional encoding", "No positional encoding."),
    Term(("limit",), r"d -> infinity|\blimit\b", "",
         "The exact d -> infinity value of an expected score: a deterministic recursion on the Gram matrix, "
         "computed in float64, in mpmath at any precision, or exactly in sympy."),
    Term(("c", "c/d"), r"\bc/d\b", "",
         "The first-order finite-width correction: E_d S = limit + c/d + O(1/d^2) (`lnrecency finite-width`)."),
    Term(("R/d^2",), r"R/d\^2", "",
         "The allowance for the second-order remainder in a mean check at width d; R is measured from the "
         "simulation (`finite-width --measure`)."),
    Term(("SE",), r"\bSE\b", "standard error", "Standard error of a Monte Carlo mean (or of a paired difference)."),
    Term(("z", "z*"), r"\bz\*? = |\bz\b", "a difference in standard errors",
         "z = (MC - prediction) / SE; z* = (MC - limit - c/d) / SE, what the first-order theory leaves."),
    Term(("key triple",), r"key triples?", "a query row and two of its keys, ordered by recency when the later "
         "key scores higher",
         "A query row i and two of its keys k < j < i: one draw orders the triple by recency when the later key "
         "scores higher, S_ij > S_ik; RP counts the triples so ordered (1/2 by chance)."),
    Term(("plan v1-v5", "plan"), r"\bplan v\d", "an experiment whose tests and readings were written before its runs",
         "A pre-registered experiment on trained models: its text (lnrecency/data/thesis_text_plan*.md, hashed into "
         "every result) states its arms, tests, margins, power and readings before any model is trained; v1 to v5 "
         "are successive plans, each answering what the last left open."),
    Term(("per-token scale",), r"per-token scale", "LayerNorm's division of each token by its own spread",
         "The part of LayerNorm (and RMSNorm) that divides each token's vector by its own standard deviation (RMS), "
         "so that every token leaves with the same length; the centring is the other part."),
    Term(("intervened",), r"\bintervened\b", "the models with the plan's intervention applied",
         "In a plan's comparison \"intervened - half intact\": the slope of the models with the intervention the "
         "test names (a share set, a scale fixed, a QK matrix replaced) minus half of the intact models' slope."),
    Term(("underpowered",), r"\bunderpowered\b",
         "at its measured spread the design confirms only a wider margin with power 0.8",
         "An equivalence test whose design, at the spread its runs measured, would confirm equivalence with power 0.8 "
         "(noncentral t) only at a margin wider than the plan's, even were the true difference 0: its cell says "
         "\"underpowered: power 0.8 needs\" that margin. Plan v2 said of Q6 that the report would say so."),
    Term(("leaning for it", "leaning against it"), r"leaning (?:for|against) it",
         "the side its smaller one-sided p favours",
         "An undecided plan test whose cell says which way its data point: toward its statement (for) or toward the "
         "opposite (against), by the smaller of its two one-sided p-values. Not a verdict."),
    Term(("first-middle gap", "first-last gap"), r"first-(?:middle|last) gap",
         "accuracy when the earlier of two identical items is the answer minus when the later one is",
         "Wu et al.'s Fig. 2 measure, in their in-context classification task: of two items with identical content, "
         "the accuracy when the first is the answer minus that when the middle (or last) one is; above 0: the "
         "earlier item wins."),
    Term(("margin",), r"\(margin \d", "the band about 0 an equivalence test must show the difference lies within",
         "An equivalence test (two one-sided tests) confirms when the difference's interval lies within +-margin, "
         "a margin fixed before the run; plan v1's H4 used 0.0025 and plan v2's Q6 0.05 on the same models."),
    Term(("half intact", "boundary"), r"half intact|\bboundary \+", "half of the intact models' slope, the "
         "value a one-sided test is decided against",
         "A plan's test compares an intervened model's slope with half of the intact models' mean slope (\"half "
         "intact\"), or with a fixed boundary set before the run (plan v4's +0.0764: half of the BOS LayerNorm mean)."),
    Term(("[A][B][C]",), r"\[A\]", "placeholder tokens of the induction pattern .. [A][B] .. [A][C] .. [A]",
         "Seed 002's induction pattern: [A], [B], [C] stand for any tokens; after [A][B] and later [A][C], the next "
         "[A] is followed by [C] (the later continuation) or [B] (the earlier)."),
    Term(("RP",), r"\bRP\b", "the share of key triples one draw orders by recency (0.5 = chance)",
         "Recency probability: the fraction of key triples (k < j < i) that one draw orders by recency, averaged "
         "over draws. RP = 1/2 is chance; the authors' panels print RP."),
    Term(("n_limit", "n_mc"), r"n_limit|n_mc", "",
         "The sequence lengths of a verdict's exact-limit decision (n_limit) and of its Monte Carlo check (n_mc)."),
    Term(("gram sampler",), r"gram sampler|\"gram\"", "",
         "The Monte Carlo sampler that draws the Gram matrix of the embeddings (Wishart) instead of the vectors: "
         "exact for these models, and its cost does not depend on d."),
    Term(("setting label",), r"setting \d", "",
         "\"setting 1\", \"setting 2\" and so on: the short name of a long setting description in a Markdown or "
         "HTML table of the report, spelled out under the table (the CSV and JSON keep the full text)."),
    Term(("false-alarm budget",), r"false-alarm budget", "",
         "The union bound on the probability that a correct claim fails by chance, over every Monte Carlo "
         "comparison of the test suite (printed at the end of `pytest`)."),
    Term(("family-wise rate",), r"family-wise", "",
         "The probability of at least one wrong decision in a family of verdicts (trained models: 0.05, Holm), or "
         "of at least one false alarm among the entries of one two-sided Monte Carlo check (1e-6, Bonferroni "
         "within: each of m entries at 1e-6 / m)."),
    Term(("expansion ceiling",), r"expansion ceiling|ceiling", "",
         "How many of the authors' printed panels any cumulant (Edgeworth) expansion can reach when fed each "
         "setting's exact cumulants; see [The authors' own simulations](authors.md)."),
)


def term(name: str) -> Term:
    """The entry one of whose names is ``name`` (KeyError naming the terms there are)."""
    for t in TERMS:
        if name in t.names:
            return t
    raise KeyError(f"glossary term must be one of {', '.join(n for t in TERMS for n in t.names)}; got {name!r}")


def page() -> str:
    """docs/glossary.md: every term, its names as the heading, its definition."""
    lines = ["# Glossary", "", "<!-- generated from lnrecency/report/words/glossary.py by python3 -m "
             "lnrecency.report.regenerate; do not edit -->", "", "```{glossary}"]
    for t in TERMS:
        lines += [", ".join(t.names), _wrap(t.definition), ""]
    return "\n".join(lines[:-1] + ["```", ""])


def _wrap(text: str, width: int = 110) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="  ",
                                   break_on_hyphens=False))
