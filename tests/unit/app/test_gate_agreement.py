"""One verdict everywhere (issue 21): on every pair of the recorded H200 scenarios
(tests/fixtures/bundles), the gate CLI's judgement (bundles read as ``python -m profiling_worker compare`` reads them), the Compare
page's Verdict and the backends page's Verdict are the same outcome with the same reason."""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache

import pandas as pd
import pytest

from bundled import bundled
from profiling_worker.bundle.gate import report
from profiling_worker.bundle.gate.context import METRIC_SET
from profiling_worker.bundle.gate.judge import OUTCOME, REASON, GateOptions, GateResult, judge
from profiling_worker.bundle.gate.sides import GateSide
from profiling_worker.bundle.schema import backends as B, columns as C

from app.core.metrics import MissingData
from app.core.views.backends import BY_DESIGN, TOOL_VERSION, WORDS, backends_frame
from app.core.views.compare import CompareOptions, JobSummary, candidates, compare_frame
from app.core import frame_columns as F
from tests.scenarios import scenario_dir, scenario_names

JOBS = scenario_names()


@lru_cache(maxsize=None)
def side(job: str) -> GateSide:
    return GateSide.load(scenario_dir(job))


def cli_judgement(base: str, cand: str, ignore: frozenset[str] = frozenset()) -> GateResult:
    return judge(side(base), side(cand), GateOptions(), ignore)


def offered_pairs() -> list[tuple[str, str]]:
    """Every (baseline, candidate) the Compare page offers (shared kernel, annotation, config)."""
    summaries = [JobSummary.of(j, str(bundled(j).manifest.get("finished_at") or ""),
                               bundled(j).spec) for j in JOBS]
    return [(base, cand) for base in JOBS for cand in candidates(base, summaries)[0]]


def agree(frame: pd.DataFrame, result: GateResult, words: dict[str, str]) -> int:
    """Assert the page's Verdict (its words mapped back by ``words``) and Reason are the CLI's
    Outcome and Reason, row by row on the gate's keys (Annotation and the config parameters);
    jobs whose parameters differ are matched by the gate on config index, which the page cannot
    show: all not comparable on both. Returns the rows compared."""
    keys = list(result.rows.columns[:result.rows.columns.get_loc(C.CONFIG_LABEL)])
    if not set(keys) <= set(frame):
        assert result.context and set(result.rows[OUTCOME]) == {"not comparable"}
        assert set(frame[F.VERDICT]) == {"not comparable"}
        return len(frame)
    both = frame[[*keys, F.VERDICT, REASON]].merge(result.rows[[*keys, OUTCOME, REASON]],
                                                   on=keys, suffixes=("", "Cli"))
    assert len(both) == len(frame)
    assert (both[F.VERDICT].replace(words) == both[OUTCOME]).all()
    assert (both[REASON] == both[REASON + "Cli"]).all()
    return len(both)


def test_compare_page_and_cli_agree_on_every_bundled_pair() -> None:
    pairs, rows = offered_pairs(), 0
    assert len(pairs) > 50
    for base, cand in pairs:
        try:
            frame = compare_frame(bundled(base), bundled(cand), CompareOptions())
        except MissingData:
            continue
        rows += agree(frame, cli_judgement(base, cand), {})
    assert rows > 500


def test_backends_page_and_cli_agree_on_every_bundled_ncu_cupti_pair() -> None:
    ncu = [j for j in JOBS if side(j).manifest["backend"]["name"] == B.NCU]
    cupti = [j for j in JOBS if side(j).manifest["backend"]["name"] == B.CUPTI]
    words = {v: k for k, v in WORDS.items()}
    ignore = frozenset(BY_DESIGN | {TOOL_VERSION, METRIC_SET})
    judged = 0
    for n in ncu:
        for c in cupti:
            try:
                frame = backends_frame(bundled(n), bundled(c))
            except MissingData:
                continue
            agree(frame, cli_judgement(c, n, ignore), words)
            judged += 1
    assert judged >= 10


@pytest.mark.parametrize("base, cand", [("h200-ncu-matmul-sweep", "h200-ncu-roofline"),
                                        ("h200-cupti-gate-tf32", "h200-cupti-gate-fp32"),
                                        ("h200-cupti-j1-fp16", "h200-cupti-matmul-sweep")])
def test_the_cli_process_exits_and_writes_what_the_judgement_says(base: str, cand: str) -> None:
    """The real command line: its exit code and Markdown are the judgement's."""
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(scenario_dir(base)), str(scenario_dir(cand))],
                          capture_output=True, text=True, timeout=120, check=False)
    result = cli_judgement(base, cand)
    assert proc.returncode == report.exit_code(result)
    assert proc.stdout == report.markdown(result)


@pytest.mark.parametrize("job", ["h200-cupti-gate-base", "h200-ncu-matmul-sweep"])
def test_the_compare_page_builds_its_side_with_the_gates_one_constructor(job: str) -> None:
    """One constructor (``GateSide.from_bundle``): the app's side of a loaded bundle is the
    CLI's, table for table, its run audit included."""
    from app.core.views.compare import gate_side

    cli, app = side(job), gate_side(bundled(job))
    assert (app.job_id, app.manifest) == (cli.job_id, cli.manifest)
    for name in ("aggregated", "runs", "collectors"):
        pd.testing.assert_frame_equal(getattr(app, name), getattr(cli, name))
    assert app.audit == cli.audit
