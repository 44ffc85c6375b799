"""The run audit's badges (issue 36) on recorded H200 jobs: one per config, the slow mode of
h200-cupti-timeline and the stability job's missing L2 flush in the details, gate-base clean."""

from __future__ import annotations

import re

from apptest_helpers import open_folds, texts
from tests.scenarios import SCENARIOS


def _open(app, monkeypatch, job: str, page: str = "stability"):
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app(page, query={"job": job})
    assert not at.exception, at.exception
    return at


BADGE = re.compile(r"^:(green|orange)-badge\[(.*)\]$")


def _badges(at) -> list[str]:
    """The badges' labels (st.badge writes a markdown badge directive)."""
    found = [BADGE.match(m.value) for m in at.markdown]
    return [m.group(2) for m in found if m]


def test_badges_name_the_failed_checks_with_a_mark_no_font_needs(store, monkeypatch,
                                                                app) -> None:
    """Issue 37: "0/30 passed" named no check (only the expander did), and the badge's
    Material icon read as its name, "report n=8192", until the icon font loaded."""
    at = _open(app, monkeypatch, "h200-cupti-stability")
    assert _badges(at) == [f"⚠ n={n}: 0/30 passed; failed l2_state (30)" for n in (256, 1024, 8192)]
    at = _open(app, monkeypatch, "h200-cupti-timeline")
    assert _badges(at) == ["✓ n=1024: 100/100 passed",
                           "⚠ n=8192: 39/100 passed; failed clock (6), population (61)"]
    assert not [m.value for m in at.markdown if ":material/" in m.value]
    # each check a badge names is said in words under the badges, once, in the audit's order
    # ("population (61)" alone was a word a new user could not read)
    said = [c.value.replace("\\", "") for c in at.caption  # the Markdown escapes dropped
            if c.value.startswith("What a failed check says")]
    assert len(said) == 1, said
    assert ("clock: the run's SM clock was more than 5 % below the median of its own config's "
            "runs" in said[0])
    assert "population: the config's runs fall in two groups" in said[0]
    assert said[0].index("clock:") < said[0].index("population:")
    assert "l2_state" not in said[0]  # no check the badges do not name
    at = _open(app, monkeypatch, "h200-cupti-gate-base", "results")
    assert not [c for c in at.caption if c.value.startswith("What a failed check says")]


def _column(at, name: str) -> list[str]:
    """Every cell of column ``name`` in the page's tables (the expander's details, drawn once
    it is opened: the page is run again with its folds open)."""
    return [str(v) for d in open_folds(at).dataframe if name in d.value for v in d.value[name]]


def test_timeline_badges_name_the_slow_mode(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-timeline")
    assert [b.split(";")[0] for b in _badges(at)] == ["✓ n=1024: 100/100 passed",
                                                     "⚠ n=8192: 39/100 passed"]
    assert "39 of 100 runs passed (clock 6, population 61)" in _column(at, "Badge")
    assert any("two modes (Ashman's D" in e for e in _column(at, "Evidence"))


def test_gate_base_passes_and_stability_names_the_missing_flush(store, monkeypatch,
                                                                app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-gate-base", "results")
    assert _badges(at) == [f"✓ n={n}: 20/20 passed" for n in (2048, 4096, 8192)]
    at = _open(app, monkeypatch, "h200-cupti-stability")
    assert [b.split(";")[0] for b in _badges(at)] == [f"⚠ n={n}: 0/30 passed"
                                                     for n in (256, 1024, 8192)]
    assert any("recorded without the L2 flush" in e for e in _column(at, "Evidence"))
    assert "derived on load" in texts(at)  # bundled before the worker wrote the audit


def test_an_unreadable_runs_file_leaves_the_audit_empty_as_ci_does_and_says_so(
        store, app, tmp_path) -> None:
    """A job whose runs.parquet is cut short, the CSV beside it whole: the gate audits no other
    file in its place, so the page shows no badge from the CSV and says why."""
    from tests.unit.app.test_run_audit_unreadable import damaged_timeline

    damaged_timeline(store["results"] / "timeline-damaged")
    at = app("stability", query={"job": "timeline-damaged"})
    assert not at.exception, at.exception
    assert _badges(at) == []
    said = [w.value for w in at.warning if w.value.startswith("Run audit:")]
    assert len(said) == 1 and "runs.parquet cannot be read" in said[0], said
    assert "CSV beside it" in said[0]


def test_every_check_has_its_meaning_in_words() -> None:
    """A check added to the worker's audit needs its words under the badges."""
    from app.core.views.run_audit import FLAG_MEANING
    from profiling_worker.bundle.schema import run_audit as A

    assert set(FLAG_MEANING) == set(A.CHECKS)


def test_a_config_at_a_steady_lower_clock_passes_and_is_said_as_no_failure(store, monkeypatch,
                                                                          app) -> None:
    """A fresh user's find: the matmul sweep opened on "fp16 n=2048: 0/10 runs passed the run
    audit (clock)" and 4 more pairs, its tensor-core GEMMs at a steady 1,515-1,711 MHz against
    the job's pooled median. Each run is now read against its own config's median: every badge
    passes, and a caption names the configs that ran below the job's fastest, claiming no cause
    the files do not show."""
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep", "results")
    badges = _badges(at)
    assert len(badges) == 15 and all(b.startswith("✓") for b in badges), badges
    (said,) = [c.value.replace("\\", "") for c in at.caption if "Clock by config" in c.value]
    assert said.startswith("Clock by config (not a failed audit: each run is checked against "
                           "its own config's median). The job's fastest config, fp32 n=8192, "
                           "ran at 1,979 MHz (its runs' median); 10 configs ran more than 5 % "
                           "below it. Cause not shown (")
    assert "fp16 n=8192 at 1,515 MHz (23 % below)" in said


def _scale_with_failed_pairs(results, configs: int, failed: int) -> str:
    """The benchmarks' scale bundle (real H200 rows tiled to ``configs`` configs x 3 runs, 3
    annotations) with run 0's clock dropped 10 % in the first ``failed`` pairs and its stored
    run audit written again, so the audit fails them; returns its job id."""
    import pandas as pd

    from benchmarks.results_page_scale import build_scale_bundle
    from profiling_worker.bundle.gate.sides import beside_tables
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.bundle.schema.run_audit import audit_runs
    from profiling_worker.bundle.writer import write_table
    from tests.scenarios import NCU_CLOCK

    job = f"scale-{configs}-configs"
    build_scale_bundle(results / job, configs=configs, runs=3)
    runs = pd.read_parquet(results / job / "tables" / "runs.parquet")
    pairs = runs[[C.ANNOTATION, C.CONFIG]].drop_duplicates().head(failed)
    at = (runs[C.METRIC] == NCU_CLOCK) & (runs[C.RUN] == 0) & runs.set_index(
        [C.ANNOTATION, C.CONFIG]).index.isin(pd.MultiIndex.from_frame(pairs))
    runs.loc[at, C.VALUE] *= 0.9
    write_table(results / job, C.TABLE_RUNS, runs)
    bundle = load_bundle(results / job)
    write_table(results / job, C.TABLE_RUN_AUDIT, audit_runs(beside_tables(bundle),
                                                             bundle.manifest))
    return job


def test_a_big_jobs_badges_are_its_failed_pairs_and_a_count(store, app) -> None:
    """Issue 37: a 1,000-config sweep drew 3,000 badges, one markdown element each, on every
    visit of Stability and Results. Above BADGE_PAIRS pairs the page draws the failed pairs'
    badges (the first BADGE_PAIRS), counts the rest, and names where every pair's badge is:
    the details' table and its CSV, drawn once the fold is opened."""
    from app.core.views.run_audit import BADGE_PAIRS

    job = _scale_with_failed_pairs(store["results"], configs=20, failed=BADGE_PAIRS + 5)
    for page in ("stability", "results"):
        at = app(page, query={"job": job})
        assert not at.exception, at.exception
        badges = _badges(at)
        assert len(badges) == BADGE_PAIRS and all(b.startswith("⚠") for b in badges), badges
        (said,) = [c.value.replace("\\", "") for c in at.caption
                   if c.value.startswith("Run audit of")]
        assert said == ("Run audit of 60 region × config pairs, summarised: 35 failed (the first "
                        "30 badges above, 5 more not drawn), 25 passed every run. Every pair's "
                        "badge: “Run audit: the checks and their evidence”, further down, and "
                        "its CSV.")
        assert len(at.markdown) < 60  # no element per pair (the badges alone were 60)
        opened = open_folds(at)
        (table,) = [d.value for d in opened.dataframe if "Badge" in d.value]
        assert len(table) == 60 and (table["Passed"] < table["Runs"]).sum() == 35
        assert f"{page}-run-audit-csv" in {b.key for b in opened.get("download_button")}


def test_a_big_job_that_passed_says_so_in_one_caption(store, app) -> None:
    """Above BADGE_PAIRS pairs, none failed: the count alone, not a "Run audit" row with no
    badge in it (the 1,000-config scale bundle: 3,000 badges, now one caption)."""
    job = _scale_with_failed_pairs(store["results"], configs=20, failed=0)
    at = app("stability", query={"job": job})
    assert not at.exception, at.exception
    assert _badges(at) == [] and "Run audit" not in [c.value for c in at.caption]
    assert ("Run audit of 60 region × config pairs, summarised: 0 failed, 60 passed every run."
            in texts(at))


def test_a_big_jobs_slow_configs_and_report_audit_are_summarised(store, app) -> None:
    """Issue 37: on a big sweep the slow-config caption named every config below the
    fastest's clock, and the HTML report's audit table showed the first 500 of its pairs,
    passed or not. Now, as the badges: the caption counts them (every one in a table in the
    fold, with its CSV), and the report counts the pairs and tables the failed ones."""
    from html import unescape

    from app.core.share.build import job_report
    from app.core.views.run_audit import AUDIT_ELSEWHERE, SLOW_EVIDENCE, SLOW_NAMED, SLOW_TABLE
    from profiling_worker.bundle.loader import load_bundle

    job = _scale_with_failed_pairs(store["results"], configs=20, failed=35)
    at = app("stability", query={"job": job})
    assert not at.exception, at.exception
    (said,) = [c.value.replace("\\", "") for c in at.caption if "Clock by config" in c.value]
    assert "ran more than 5 % below it, summarised." in said
    assert said.endswith(f"Every one: {SLOW_EVIDENCE}.")
    opened = open_folds(at)
    assert SLOW_TABLE in [c.value for c in opened.caption]
    (slow,) = [d.value for d in opened.dataframe if "BelowPct" in d.value]
    assert len(slow) > SLOW_NAMED and (slow["BelowPct"] > 5).all()
    assert "stability-slow-configs-csv" in {b.key for b in opened.get("download_button")}
    report = unescape(job_report(load_bundle(store["results"] / job)))
    assert ("Run audit of 60 region × config pairs, summarised: 35 failed (the table below), "
            f"25 passed every run. Every pair's badge: {AUDIT_ELSEWHERE}.") in report
    assert "Runs passed per region × config that failed" in report
    assert "Runs passed per region × config<" not in report  # no table of every pair


def _stored_audit(store, src, layout: int) -> str:
    """A copy of the recorded job ``src`` in the result store with its run audit stored as the
    worker writes it (results.write_run_audit): layout 2, its durations as data, or, for
    ``layout`` 1, the six columns a worker of before wrote (the same text); its job id."""
    import json
    import shutil

    from profiling_worker.bundle.gate.sides import beside_tables
    from profiling_worker.bundle.loader import load_bundle
    from profiling_worker.bundle.schema import columns as C, run_audit as A
    from profiling_worker.bundle.writer import write_table
    from profiling_worker.job.results import write_run_audit

    job = store["results"] / f"{src.name}-layout-{layout}"
    shutil.copytree(src, job)
    bundle = load_bundle(job)
    manifest = {**bundle.manifest, "job_id": job.name}
    tables = write_run_audit(job, {**bundle.tables, **beside_tables(bundle)}, manifest)
    assert manifest[A.RULES_KEY] == A.RULES
    if layout == 1:
        write_table(job, C.TABLE_RUN_AUDIT, tables[C.TABLE_RUN_AUDIT][A.COLUMNS])
    (job / C.MANIFEST_FILE).write_text(json.dumps(manifest), encoding="utf-8")
    return job.name


def test_evidence_durations_read_alike_from_a_table_of_before_and_of_now(store, app) -> None:
    """Review (session 23): the pages rewrote the evidence's ns by a pattern. The worker now
    records them as data (run_audit layout 2) and the page writes them in its unit; a table of
    before (layout 1, its text alone) is rewritten as before. Both show the same evidence: a
    population's medians (h200-cupti-timeline) and a timer floor (h200-cupti-idle-gap)."""
    from app.core.derived import DEFAULT_TIME_UNIT
    from app.core.views.run_audit import STORED
    from profiling_worker.bundle.schema import run_audit as A

    for src, check in ((SCENARIOS / "h200-cupti-timeline", A.POPULATION),
                       (SCENARIOS.parent / "h200_runs" / "h200-cupti-idle-gap", A.TIMER)):
        shown = {}
        for layout in (1, 2):
            at = open_folds(app("stability", query={"job": _stored_audit(store, src, layout)}))
            assert not at.exception, at.exception
            assert STORED in texts(at)  # each read from its stored table, not derived again
            shown[layout] = [_column(at, "Evidence"),
                             [c.value for c in at.caption if "failed badges' evidence" in c.value]]
        assert shown[1] == shown[2]
        evidence = shown[2][0]
        stated = [e for e in evidence if f"{check}" in e and f" {DEFAULT_TIME_UNIT}" in e]
        assert stated, evidence  # the check's durations, in the page's unit
        assert not [e for e in evidence if re.search(r"\d ns\b", e)]  # none left in ns
