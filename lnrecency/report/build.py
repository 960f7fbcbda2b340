"""The report pipeline: compute every table and figure, write them atomically, then ``index.md``.

``build_report(out, quick=False, formats=("md", "csv", "tex", "json"), seed=0)`` writes into ``out``:
one file per table and format (``NAME.md``, ``NAME.csv``, ``NAME.tex``, ``NAME.json``), ``NAME.png`` and
``NAME.pdf`` per figure (a quick report: ``NAME.png`` only), ``report.json`` (settings and the list of files) and
``index.md`` (every table and figure with one line on what it shows). Progress (lnrecency.runtime.progress): a bar
over the steps on a terminal, a line every 10 s otherwise, nothing with ``progress=False``. The report is built in a
hidden sibling folder and published by renames at the end
(signals held back during the swap), so an interrupted run leaves ``out`` as it was; within the build
each file is written to a temporary name and moved into place, so an
interrupted run leaves only complete files. The claim verdicts are evaluated in a worker process while
the figures are drawn (two cores); the output does not depend on that.
"""
from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Iterable

from lnrecency.claims.registry import CLAIMS, available, evaluate, start
from lnrecency.files.atomic import atomic_write_text, publish, staged_directory
from lnrecency.files.store import EVIDENCE_FILES, StoreError, dumps, loads
from lnrecency.files.table_record import REPORT_FORMATS, Table, parse_formats
from lnrecency.inference.evidence import strict_json
from lnrecency.report import figure_list as figures
from lnrecency.report import table_list as claim_tables
from lnrecency.report.data import ReportData, ReportEvidence
from lnrecency.report.published_rows import with_published
from lnrecency.report.settings import ReportSettings
from lnrecency.runtime.arguments import check_int
from lnrecency.runtime.child import one_blas_thread
from lnrecency.runtime.progress import Progress

__all__ = ["ReportResult", "build_report", "expected_files"]


@dataclass
class ReportResult:
    out: Path
    settings: ReportSettings
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str, str]] = field(default_factory=list)  # (name, title, caption)
    not_run: list[str] = field(default_factory=list)  # names of the figures not drawn (their experiment not cached)
    files: list[Path] = field(default_factory=list)
    seconds: float = 0.0


def expected_files(settings: ReportSettings, formats: Iterable[str] = REPORT_FORMATS) -> list[str]:
    """File names a complete report holds (tables x formats, figures x ``settings.figure_formats``, index.md,
    index.html with the html format, report.json); a figure not run (:attr:`ReportResult.not_run`) writes none of its
    files."""
    fmts = parse_formats(formats, REPORT_FORMATS)
    names = [f"{t.stem}.{f}" for t in claim_tables.TABLES for f in fmts if f != "html"]
    names += [f"{stem}.{ext}" for stem in figures.figure_names(settings) for ext in settings.figure_formats]
    return names + ["index.md", "report.json"] + (["index.html"] if "html" in fmts else [])


HOW_TO_READ = (
    "How to read the tables: the exact d -> infinity limit and the sympy closed form sit beside the Monte Carlo "
    "mean (MC), its standard error (SE) and z = (MC - prediction) / SE; the prediction at finite d is the "
    "first-order expectation limit + c/d. dS columns are paired Monte Carlo differences S_(n,j) - S_(n,j-1) "
    "(positive = recency). \"n/a\" marks a cell undefined by design; \"exact (no test)\" an entry with no "
    "randomness (the diagonal S_ii = lam). Long settings are cited by a label (setting 1, setting 2 and so on) "
    "spelled out under each table. Words: docs/glossary.md.")


TITLE = "lnrecency report: does LayerNorm induce recency bias in transformer decoders?"


def _settings_line(s: ReportSettings) -> str:
    return (f"{'quick' if s.quick else 'default'}; seed {s.seed}; n = {s.n}; layers 1-{s.layers}; Monte Carlo "
            f"widths d = {list(s.ds)}, {s.samples} samples each (d-independent gram sampler). Verdicts come "
            f"from `lnrecency verify" + (" --quick" if s.quick else "") + "`.")


def provenance_lines(used, cache: str | None = None) -> list[str]:
    """What the report's verdicts read from the cache (lnrecency.experiments.run_cache.reads, kept in the stored
    evidence so that a report rendered from it says the same): the cache folder (``cache``,
    lnrecency.experiments.run_cache.cache_label; None: evidence written before it was kept), then one row per
    cached result (experiment, entry, plan, date, hash); every trained row of the report comes from one of these,
    and nothing else was read."""
    if used is None:
        return ["Not recorded: this report was rendered from evidence written before the report kept what it read."]
    if cache is not None:
        return [f"Cache folder: `{cache}`.", "", *provenance_lines(used)]
    if not used:
        return ["No cached result was read: every verdict here was computed by the run that wrote it, and the claims "
                "on trained and real models are not run (`lnrecency report --no-cache` always reads none; "
                "`--cache DIR` reads another cache than `$LNRECENCY_CACHE`)."]
    lines = [f"{len(used)} cached result{'s' if len(used) != 1 else ''} read, each validated before use (the claims "
             "on trained and real models rest on these and on nothing else; `lnrecency report --no-cache` reads "
             "none):", "",
             "| experiment | entry | plan (SHA-256, first 12 digits) | written | SHA-256 (first 12 digits) | bytes |",
             "|---|---|---|---|---|---:|"]
    for e in used:
        plan = e["plan_sha256"][:12] if e.get("plan_sha256") else "-"
        lines.append(f"| {e['kind']} | `{e['entry']}` | {plan} | {e['modified']} | {e['sha256'][:12]} | "
                     f"{e['bytes']} |")
    return lines


def _index(s: ReportSettings, tables: list, figs: list, results: list, used=None, cache: str | None = None) -> str:
    from lnrecency.report.headline import headline_markdown

    verdicts = next((t for t, _, _ in tables if t.name == "verdicts"), None)
    lines = [f"# {TITLE}", "", "(The same report as one page: [index.html](index.html), with the "
             "figures embedded and sortable tables.)", "",
             headline_markdown(results, quick=s.quick), "## Verdicts", "",
             verdicts.to_markdown().split("\n", 2)[2] if verdicts is not None else "(verdicts not written)", "",
             "## What this report read", "", *provenance_lines(used, cache), "",
             "## Settings of this report", "", _settings_line(s), "", HOW_TO_READ, "", "## Tables", ""]
    from lnrecency.report.table_list import claims_of_table

    published = {r.id for r in results if type(r.evidence).__name__ == "PublishedRuns"}
    for table, paths, line in tables:
        links = ", ".join(f"[{p.name}]({p.name})" for p in paths)
        # a table not run here whose claims' rows were re-derived from the runs published in docs/ says so (its
        # claims' rows in the verdicts above are not "not run")
        note = (" (the experiment is not cached here; its claims' verdicts above are re-derived from the runs "
                "published in docs/)" if table.title.endswith(": not run")
                and published & set(claims_of_table(table.name)) else "")
        lines.append(f"- **{table.title}**{note} — {line} ({links})")
    lines += ["", "## Figures", ""]
    previous = None
    for group in not_run_groups(figs):
        if group[0][0].not_run:  # figures not drawn: one paragraph in words, with the command that draws them
            lines += ["### " + "; ".join(f.title for f, _ in group), "", group[0][0].caption, ""]
            previous = None
            continue
        fig, paths = group[0]  # a caption shared by consecutive figures is written once, above the first
        links = ", ".join(f"[{p.name}]({p.name})" for p in paths)
        png = next((p.name for p in paths if p.suffix == ".png"), None)
        lines += [f"### {fig.title}", ""]
        lines += [f"{fig.caption} ({links})" if fig.caption != previous else f"(Caption as above.) ({links})", ""]
        previous = fig.caption
        if png:
            lines += [f"![{fig.title}]({png})", ""]
    return "\n".join(lines) + "\n"


def not_run_groups(figs: list) -> list[list]:
    """(figure, paths) pairs in report order, grouped: consecutive not-run figures sharing a caption (one
    experiment's) together, every drawn figure alone."""
    groups: list[list] = []
    for item in figs:
        fig = item[0]
        last = groups[-1][0][0] if groups else None
        if fig.not_run and last is not None and last.not_run and last.caption == fig.caption:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def _report_ids(quick: bool) -> list[str]:
    """Every claim; those on trained or real models when their experiment is cached (no training here) or its
    cache is damaged (the report names the file): lnrecency.claims.registry.available."""
    return [cid for cid in CLAIMS if available(cid, quick)]


def _start_verdicts(settings: ReportSettings, jobs: int):
    """Evaluate every claim in ``jobs`` worker processes, so they overlap the figures drawn here and each
    other (the registry's tasks, one per claim); (pool, running) or (None, None) when jobs == 1."""
    if jobs < 2 or "fork" not in mp.get_all_start_methods():
        return None, None
    running = start(_report_ids(settings.quick), quick=settings.quick, jobs=jobs)
    return running.pool, running





def build_report(out: str | Path, *, quick: bool = False, formats: Iterable[str] = REPORT_FORMATS, seed: int = 0,
                 progress: bool | None = None, jobs: int | None = None,
                 convention: str = "authors-v2", evidence: str | Path | None = None,
                 evidence_out: str | Path | None = None) -> ReportResult:
    """Build the whole report into ``out`` (created if missing); return what was written.

    ``jobs``: processes (default: 2 when the machine has 2 or more cores); with 2 the claim verdicts
    (``lnrecency verify``) are evaluated in a worker while the figures are drawn. Output does not
    depend on ``jobs``. ``evidence``: a folder written by ``lnrecency verify --out`` (:func:`write_evidence`):
    the report is rendered from it alone, computing nothing (its settings are the evidence's; ``quick``,
    ``seed`` and ``convention`` are not used), and a table and its verdict cite the same stored run.
    ``evidence_out``: also publish this run's evidence in that folder, the files ``lnrecency verify --out`` writes
    for the same settings, byte for byte (one computation for both; the figures are then all drawn here, beside
    the verdict worker, so that this process holds every number).
    """
    fmts = parse_formats(formats, REPORT_FORMATS)
    jobs = min(2, os.cpu_count() or 1) if jobs is None else check_int("jobs", jobs, minimum=1)
    if evidence is not None and evidence_out is not None:
        raise ValueError("--evidence-out writes the evidence a report computes; a report --from computes none "
                         "(the folder --from names is its evidence)")
    if evidence_out is not None and Path(evidence_out).resolve() == Path(out).resolve():
        raise ValueError(f"--evidence-out {str(evidence_out)!r} is the report's --out; the evidence needs a folder of "
                         "its own")
    # the evidence's digest before and after it is read: the figure cache's key only when they agree
    digest = figures.evidence_digest(evidence) if evidence is not None else None
    data = read_evidence(evidence) if evidence is not None else None
    if digest is not None and figures.evidence_digest(evidence) != digest:
        digest = None
    settings = data.settings if data is not None else ReportSettings.make(quick=quick, seed=seed,
                                                                           convention=convention)
    final = Path(out)
    if evidence_out is None:
        # everything is written into a hidden staging folder and published at the end (publish): an
        # interrupted run leaves the old directory as it was and no partial one
        with staged_directory(final, expected_files(settings, fmts)) as stage:
            return _build_into(stage, final, settings, fmts, jobs, progress, data, figure_inputs=digest)
    data = ReportData(settings)
    with staged_directory(Path(evidence_out), EVIDENCE_FILES, flag="--evidence-out") as ev_stage, \
            staged_directory(final, expected_files(settings, fmts)) as stage:
        result = _build_into(stage, final, settings, fmts, jobs, progress, data, figure_helper=False)
        _publish_evidence(ev_stage, Path(evidence_out), data.evidence())
    return result


def read_evidence(folder: str | Path) -> ReportData:
    """A frozen :class:`ReportData` from a folder of ``lnrecency verify --out`` (:mod:`lnrecency.files.store`)."""

    ev = loads(folder)
    if not isinstance(ev, ReportEvidence) or not isinstance(ev.settings, ReportSettings):
        raise StoreError(f"--from: {str(folder)!r} holds {type(ev).__name__}, not a report's evidence")
    s = ev.settings
    try:  # the sizes must be the ones lnrecency verify --out writes (a forged n = 100000 would allocate GBs)
        canonical = ReportSettings.make(quick=s.quick, seed=s.seed, convention=s.convention)
    except (ValueError, TypeError) as exc:
        raise StoreError(f"--from: {str(folder)!r}: the stored report settings are invalid: {exc}") from None
    if s != canonical:
        diff = sorted(f.name for f in fields(s) if getattr(s, f.name) != getattr(canonical, f.name))
        raise StoreError(f"--from: {str(folder)!r}: the stored report settings differ from those lnrecency verify "
                         f"--out writes ({', '.join(diff)}); refused before rendering")
    return ReportData.from_evidence(ev)


def collect_evidence(*, quick: bool = False, seed: int = 0, convention: str = "authors-v2",
                     jobs: int | None = None, progress: bool | None = None) -> ReportEvidence:
    """Every verdict with its typed evidence, and every number the report's tables and figures read:
    the report is built once (into a scratch folder, discarded) and its data kept."""

    settings = ReportSettings.make(quick=quick, seed=seed, convention=convention)
    jobs = min(2, os.cpu_count() or 1) if jobs is None else check_int("jobs", jobs, minimum=1)
    data = ReportData(settings)
    with tempfile.TemporaryDirectory(prefix="lnrecency-evidence-") as scratch:
        _build_into(Path(scratch), Path(scratch), settings, ("json",), jobs, progress, data, collect=True)
    return data.evidence()


def write_evidence(out: str | Path, *, quick: bool = False, seed: int = 0, convention: str = "authors-v2",
                   jobs: int | None = None, progress: bool | None = None) -> list[Path]:
    """``lnrecency verify --out DIR``: evidence.json and arrays.npz (:mod:`lnrecency.files.store`, read back by
    ``report --from DIR``) and verdicts.json (the ``verify --json`` list), published atomically."""


    final = Path(out)
    with staged_directory(final, EVIDENCE_FILES) as stage:
        ev = collect_evidence(quick=quick, seed=seed, convention=convention, jobs=jobs, progress=progress)
        _publish_evidence(stage, final, ev)
    return [final / n for n in EVIDENCE_FILES]


def _publish_evidence(stage: Path, final: Path, ev: ReportEvidence) -> None:
    """The files of :data:`EVIDENCE_FILES`, written into ``stage`` and published to ``final``."""
    text, blob = dumps(ev)
    atomic_write_text(stage / "evidence.json", text)
    (stage / "arrays.npz").write_bytes(blob)
    atomic_write_text(stage / "verdicts.json",
                      json.dumps([strict_json(r.to_json()) for r in ev.verdicts], indent=1) + "\n")
    publish(stage, final)


def _build_into(out: Path, final: Path, settings: ReportSettings, fmts, jobs: int, progress,
                data: ReportData | None = None, collect: bool = False, figure_helper: bool = True,
                figure_inputs: str | None = None) -> ReportResult:
    """Build into ``out`` and publish to ``final``; ``collect``: only fill ``data`` (no figure files, no
    publish; :func:`collect_evidence`); ``figure_helper=False``: no figure helper (``data`` then holds every number the
    figures read)."""
    start = time.perf_counter()
    data = ReportData(settings) if data is None else data
    result = ReportResult(out, settings)
    tables: list[tuple[Table, list[Path], str]] = []
    figs: list[tuple[figures.ReportFigure, list[Path]]] = []
    show = None if progress is None else bool(progress)  # None: a bar on a terminal, a line every 10 s otherwise
    drawing = figures.Drawing(figures.drawing_units(), write=not collect, pure=tuple(figures.PURE_UNITS),
                              names=frozenset(figures.figure_names(settings)), formats=settings.figure_formats,
                              **figures.figure_cache(settings, figure_inputs, data.frozen,
                                                     use=figure_helper and not collect))
    units = drawing.units
    drawn: dict[int, list] = {}  # unit -> [(figure without its matplotlib object, paths)]
    others = set(mp.active_children())  # processes this build did not start (left alone on interrupt)
    pools: list = []
    helper = pending = blas = None
    from lnrecency.experiments import run_cache

    run_cache.clear_reads()  # the report's provenance: what it reads from here on
    # what is alive now (the modules, sympy's and matplotlib's tables) is moved out of the
    # collector's reach for the build: its full collections, triggered by the figures' and the proofs' allocations,
    # then scan only what the build makes, here and in the forked workers (which inherit it without touching it).
    # `report --quick`, nothing cached, 6 runs each way on this 2-core machine: 19.5 s mean without, 17.9 s with
    # (16.3-20.1); the figures of the heatmap and authors' units alone: 4.8 CPU-s without, 3.9 with. Undone after.
    gc.freeze()
    try:
        pool, pending = (None, None) if data.frozen else _start_verdicts(settings, jobs)
        pools += [pool] if pool is not None else []
        if jobs >= 2 and not collect and figure_helper:
            # a second process draws figures beside this one (stored evidence: from it; otherwise computing
            # the data of the units it claims, with the same seeds, so the files do not depend on who drew what)
            helper = figures.start_helper(drawing, data, out)
            pools += [helper[0]] if helper is not None else []
        # with the helper, each figure step claims the next unit (some steps then find none left); rendering stored
        # evidence, the tables come first (they compute nothing), so that both processes end on figures; computing,
        # after the figures (the data the figures drawn here computed serves the tables)
        rest = [("verdicts", None)] + [("table", t) for t in claim_tables.TABLES]
        # beside the workers, BLAS threads here would oversubscribe the cores (lnrecency.runtime.child.one_blas_thread)
        blas = one_blas_thread() if jobs >= 2 else None
        bar = Progress(len(units) + len(rest), "report", "steps", enabled=show)
        try:
            figure_steps = 0
            while figure_steps < len(units) or rest:
                if rest and (figure_steps == len(units) or (helper is not None and data.frozen)):
                    kind, item = rest.pop(0)
                else:
                    kind, item = "figure", None if helper is not None else figure_steps
                    figure_steps += 1
                note = ""
                if kind == "verdicts":
                    note = "lnrecency verify"
                    if not data.frozen:
                        # the trained claims whose experiments publish their runs: decided from them where not
                        # cached (lnrecency.report.published_rows)
                        data.set_verdicts(with_published(
                            pending.result() if pending is not None else
                            evaluate(_report_ids(settings.quick), quick=settings.quick, progress=False), CLAIMS,
                            quick=settings.quick))
                elif kind == "table":
                    note = item.stem
                    table = item.build(data)
                    table_fmts = tuple(f for f in fmts if f != "html")
                    tables.append((table, table.write(out, table_fmts) if table_fmts else [], item.line))
                else:
                    idx = item if item is not None else figures.claim_next(helper[2])  # the helper's counter
                    if idx < len(units):
                        drawn[idx] = drawing.draw(idx, data, out)
                        note = drawn[idx][-1][0].name if drawn[idx] else ""
                bar.update(1, note)
        finally:
            bar.close()
    except BaseException:
        # interrupted: stop the workers now instead of waiting for them; every process this build started,
        # also one whose pool was still being set up when the interrupt came (SIGKILL: nothing there to
        # clean up, the output is staged here)
        for proc in set(mp.active_children()) - others:
            proc.kill()
        for p in pools:
            p.shutdown(wait=False, cancel_futures=True)
        pools = []
        raise
    finally:
        for p in pools:
            p.shutdown(wait=True, cancel_futures=True)
        if blas is not None:
            blas.restore_original_limits()
        figures.forget_helper()  # the helper has its copy (fork)
        gc.unfreeze()
    if helper is not None:  # the helper's figures
        drawn.update(dict(helper[1].result()))
    figs = [x for q in range(len(units)) for x in drawn.get(q, [])]  # the units' order, as in one process
    result.tables = [t for t, _, _ in tables]
    result.figures = [(f.name, f.title, f.caption) for f, _ in figs]
    result.not_run = [f.name for f, _ in figs if f.not_run]
    result.files = [p for _, paths, _ in tables for p in paths] + [p for _, paths in figs for p in paths]
    if not data.frozen:  # what this run read (kept in the evidence; a rendering from it says the same)
        data.provenance, data.cache = tuple(run_cache.reads()), run_cache.cache_label()
    used = None if data.provenance is None else [dict(e) for e in data.provenance]
    meta = {"settings": asdict(settings), "formats": list(fmts), "cache": data.cache, "provenance": used,
            "tables": [t.name for t in result.tables],
            "figures": [{"name": n, "title": t, "caption": c, "drawn": n not in result.not_run}
                        for n, t, c in result.figures],
            "files": sorted([p.name for p in result.files] + ["index.md", "report.json"]
                            + (["index.html"] if "html" in fmts else []))}
    atomic_write_text(out / "report.json", json.dumps(meta, indent=1) + "\n")
    results = [r for rs in data.verdicts().values() for r in rs]
    atomic_write_text(out / "index.md", _index(settings, tables, figs, results, used, data.cache))
    if "html" in fmts and not collect:
        from lnrecency.report.html import render_html

        pngs = []  # (title, caption, PNG name), or None for a group of figures not run (in words)
        for group in not_run_groups(figs):
            fig, paths = group[0]
            if fig.not_run:
                pngs.append(("; ".join(f.title for f, _ in group), fig.caption, None))
            else:
                pngs += [(fig.title, fig.caption, p.name) for p in paths if p.suffix == ".png"]
        atomic_write_text(out / "index.html", render_html(
            title=TITLE, results=results, tables=result.tables, figures=pngs, out=out,
            settings_line=_settings_line(settings), how_to_read=HOW_TO_READ, quick=settings.quick,
            provenance="\n".join(provenance_lines(used, data.cache))))
    if collect:  # collect_evidence: the data was the point
        return result
    publish(out, final)
    result.out = final
    result.files = [final / p.name for p in result.files] + [final / "report.json", final / "index.md"] + (
        [final / "index.html"] if "html" in fmts else [])
    result.seconds = time.perf_counter() - start
    return result


