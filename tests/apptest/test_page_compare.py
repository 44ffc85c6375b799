"""Compare and backends pages on the bundled H200 jobs."""

from __future__ import annotations

from pathlib import Path

from apptest_helpers import plotly_specs, texts, unescape
from app.core import metric_roles
from app.core.derived import DEFAULT_TIME_UNIT
from app.core import frame_columns as F
from app.core.table_text import header
from profiling_worker.bundle.schema import metrics as M
from app.core.views.compare import MOST_ALIKE, named_job, none_alike_text, pair_line
from tests.scenarios import SCENARIOS


def in_time(*jobs: str) -> tuple[str, ...]:
    """The bundled scenarios ``jobs``, earliest first by the time their manifests record (the
    order Compare gives a pair it picks: the earlier the baseline)."""
    import json

    def started(job: str) -> str:
        manifest = json.loads((SCENARIOS / job / "manifest.json").read_text(encoding="utf-8"))
        return str(manifest.get("created_at") or manifest["started_at"])

    return tuple(sorted(jobs, key=started))


def shown_pair(at) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The page's (baseline, candidate)."""
    assert not at.exception, at.exception
    return (at.selectbox(key="compare-baseline").value,
            at.selectbox(key="compare-candidate").value)


def test_compare_default_candidate_is_a_meaningful_pair(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"job": "h200-ncu-elementwise"})
    assert not at.exception, at.exception
    # the selected job against the job most like it, which no job is measured like: the most
    # alike (one difference, cache control), said so; the earlier of the two is the baseline
    # (session 22: an older candidate against a newer baseline read "below 1 is faster"
    # backwards in time), here the selected job, recorded 15 minutes before
    pair = ("h200-ncu-elementwise", "h200-ncu-elementwise-cache-none")
    assert shown_pair(at) == in_time(*pair) == pair
    assert not (at.dataframe[0].value["Ratio"] == 1.0).all()
    # said of the job selected, which no job was measured like (session 22: of the baseline)
    assert none_alike_text("h200-ncu-elementwise", "h200-ncu-elementwise-cache-none",
                           lambda j: f"`{j}`") in texts(at)
    # what "most alike" means, in words (a fresh user read "this is the most alike" and could
    # not tell alike in what): there and in the Candidate box's help
    assert f"The Candidate box lists {MOST_ALIKE} first." in texts(at)
    assert "(GPU or host time)" in at.selectbox(key="compare-candidate").help
    assert not [i for i in at.info if "is not shown here" in i.value]
    # the Metric picker shows words with the raw name beside; its value stays the raw name
    picker = at.selectbox(key="compare-metric")
    assert picker.value == M.GPU_TIME
    assert metric_roles.readable({}, M.GPU_TIME) in picker.options
    assert M.GPU_TIME not in picker.options
    # the cycle check says what it computes: a clock rate is no count of cycles
    (cycle,) = [c.value for c in at.caption if c.value.startswith("Cycle check")]
    assert unescape(cycle).count(" × the run's duration") + unescape(cycle).count(
        "the cycles counter") == 1, cycle
    # another baseline, which the selected job cannot be compared with: its most alike job
    at.selectbox(key="compare-baseline").set_value("h200-ncu-j1-fp16").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == "h200-ncu-gate-base"
    # a baseline the user picks brings the selected job as candidate, where it is offered
    at.selectbox(key="compare-baseline").set_value("h200-ncu-elementwise-cache-none").run()
    assert at.selectbox(key="compare-candidate").value == "h200-ncu-elementwise"
    # and the pair's own baseline its candidate again
    at.selectbox(key="compare-baseline").set_value("h200-ncu-elementwise").run()
    assert shown_pair(at) == pair


def test_compare_opens_on_a_pair_the_gate_can_judge(store, monkeypatch, app) -> None:
    """Issue 37: Compare opened on a candidate it then called not comparable (cupti-matmul-sweep
    against the ncu matmul rules job: another backend) although jobs measured alike were there."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    for job, alike in (("h200-cupti-matmul-sweep", "h200-cupti-"),
                       ("h200-cupti-gate-base", "h200-cupti-gate-again"),
                       ("h200-ncu-gate-base", "h200-ncu-j1-fp16")):
        at = app("compare", query={"job": job})
        pair = shown_pair(at)
        (other,) = set(pair) - {job}  # the selected job and one alike, the earlier first
        assert other.startswith(alike) and pair == in_time(job, other), (job, pair)
        assert not [w for w in at.warning if "Not comparable" in w.value], pair
        assert "not comparable" not in set(at.dataframe[0].value["Verdict"]), pair


def test_compare_opens_on_a_comparable_pair_of_the_bundled_jobs(store, monkeypatch, app) -> None:
    """Issue 37: the app opens on h200-ncu-matmul-sweep, which no bundled job was measured
    like, so Compare opened on a "Not comparable" warning. Opened on the app's default job,
    it now takes a pair the gate can judge; a job the user named stays the baseline (the
    scenarios: the recorded jobs the app ships, frozen for tests)."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare")
    assert not at.exception, at.exception
    assert at.sidebar.selectbox(key="sidebar-job").value == "h200-ncu-matmul-sweep"
    baseline = at.selectbox(key="compare-baseline").value
    candidate = at.selectbox(key="compare-candidate").value
    assert baseline != candidate
    assert not [w for w in at.warning if "Not comparable" in w.value], (baseline, candidate)
    assert "not comparable" not in set(at.dataframe[0].value["Verdict"]), (baseline, candidate)
    assert (baseline, candidate) == in_time(baseline, candidate)  # forward in time
    named = app("compare", query={"job": "h200-ncu-matmul-sweep"})  # the user's: in the pair
    pair = shown_pair(named)
    assert "h200-ncu-matmul-sweep" in pair and pair == in_time(*pair), pair


def test_compare_job_with_itself(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "h200-ncu-j1-fp16", "candidate": "h200-cupti-j1-fp16"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == "h200-cupti-j1-fp16"
    assert (at.dataframe[0].value["Ratio"] < 1).all()  # CUPTI is faster
    at.selectbox(key="compare-candidate").set_value("h200-ncu-j1-fp16").run()
    assert not at.exception
    assert len(plotly_specs(at)) == 1
    assert set(at.dataframe[0].value["Ratio"]) == {1.0}
    assert "4 matching annotation × config pairs: 4 same" in texts(at)
    # issue 37: the page says that the two sides are one job
    assert [i.value for i in at.info if "are the same job" in i.value]


def test_backends_opens_on_the_selected_jobs_pair(store, monkeypatch, app) -> None:
    """A fresh user's find: with h200-ncu-matmul-sweep selected (the app's default job) the page
    opened on h200-ncu-j1-fp16 vs h200-cupti-j1-fp16, though h200-cupti-matmul-sweep was there.
    The selected job's comparable pair is the default, from either side; a job in no pair keeps
    the J1 pair."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    sweep = ("h200-ncu-matmul-sweep", "h200-cupti-matmul-sweep")
    for query, pair in (({}, sweep), ({"job": "h200-ncu-matmul-sweep"}, sweep),
                        ({"job": "h200-cupti-matmul-sweep"}, sweep),
                        ({"job": "h200-cupti-gate-base"},
                         ("h200-ncu-gate-base", "h200-cupti-gate-base")),
                        ({"job": "h200-events-j1-fp16"},  # no ncu or CUPTI job: the J1 pair
                         ("h200-ncu-j1-fp16", "h200-cupti-j1-fp16"))):
        at = app("backends", query=query)
        assert not at.exception, (query, at.exception)
        shown = (at.selectbox(key="backends-ncu").value, at.selectbox(key="backends-cupti").value)
        assert shown == pair, query
    # the user's own pick of another ncu job still brings that job's best CUPTI match
    at.selectbox(key="backends-ncu").set_value("h200-ncu-matmul-sweep").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="backends-cupti").value == "h200-cupti-matmul-sweep"


def test_backends_default_pair(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    assert not at.exception, at.exception
    assert at.selectbox(key="backends-ncu").value == "h200-ncu-j1-fp16"
    assert at.selectbox(key="backends-cupti").value == "h200-cupti-j1-fp16"
    assert len(plotly_specs(at)) == 1 and len(at.dataframe) == 3
    assert "wall time" in texts(at)
    # every table has its CSV (a fresh user's find: the three-backend and wall tables had none)
    keys = {b.key for b in at.get("download_button")}
    assert {"backends-csv", "backends-three-csv", "backends-wall-csv"} <= keys, keys
    # the pair is measured alike: no warning, the nsight-python versions in a caption
    assert not [w for w in at.warning if "different conditions" in w.value]
    assert "0.9.6 vs 1.1.0 (ncu vs CUPTI): by design" in texts(at)
    # the recorded events job of J1 beside them, its gap to CUPTI attributed, the caption saying how
    assert at.selectbox(key="backends-events").value == "h200-events-j1-fp16"
    assert "includes launch overhead and inter-kernel gaps" in texts(at)  # what events measure
    three = at.dataframe[1].value
    assert sorted(three["n"]) == [1024, 2048, 4096, 8192]
    assert {"HostLaunchUs", "ResidualUs", "ResidualPct"} <= set(three.columns)
    assert three["ResidualUs"].notna().all()
    # the column as its table heads it (table_text.header: "Residual (µs)")
    assert f"{header('ResidualUs')}: the median over runs of each run's events" in texts(at)
    assert len(at.dataframe[2].value) == 3  # the wall times of the three jobs
    # the three bundled J1 jobs come from three device calls: both pairs say so (a new user
    # found the page's n = 8192 residual at -28.7 µs where the docs' one-call table has -1.3)
    apart = [w.value for w in at.warning if "were recorded apart (device runs" in w.value]
    assert [a.split(" were")[0] for a in apart] == ["The ncu and CUPTI jobs",
                                                    "The CUPTI and events jobs"]
    assert "'h200 1202-run7', started 1.9 days apart" in apart[1]


def _one_run_copy(src: Path, dest: Path, run: int) -> None:
    """``src`` with only run ``run`` kept, its aggregated table rebuilt by the worker."""
    import json
    import shutil

    from profiling_worker.bundle.loader import read_table
    from profiling_worker.bundle.writer import write_table
    from profiling_worker.bundle.stats.aggregate import aggregate_runs
    from profiling_worker.bundle.schema import columns as C

    shutil.copytree(src, dest)
    runs = read_table(dest, C.TABLE_RUNS)
    runs = runs[runs[C.RUN] == run].assign(**{C.RUN: 0})
    write_table(dest, C.TABLE_RUNS, runs)
    write_table(dest, C.TABLE_AGGREGATED, aggregate_runs(runs, ["n"]))
    manifest = json.loads((dest / C.MANIFEST_FILE).read_text())
    manifest.update(job_id=dest.name, spec={**manifest["spec"], "runs": 1})
    (dest / C.MANIFEST_FILE).write_text(json.dumps(manifest))


def test_one_run_jobs_are_not_enough_to_tell(store, app) -> None:
    """Issue 11, case 4: two 1-run jobs are not comparable, and the page says why."""
    for run, name in ((0, "one-run-a"), (1, "one-run-b")):
        _one_run_copy(SCENARIOS / "h200-cupti-stability", store["results"] / name, run)
    at = app("compare", query={"job": "one-run-a"})
    assert not at.exception, at.exception
    # two copies of one job, recorded at one time: the selected one is the candidate
    assert at.selectbox(key="compare-baseline").value == "one-run-b"
    assert at.selectbox(key="compare-candidate").value == "one-run-a"
    assert set(at.dataframe[0].value["Verdict"]) == {"not comparable"}
    assert "3 matching annotation × config pairs: 3 not comparable" in texts(at)
    assert {"baseline has 1 run and candidate has 1 run; at least 2 needed for a "
            "spread"} == set(at.dataframe[0].value["Reason"])


def test_compare_from_a_cpu_job_offers_no_gpu_job_and_says_why(seeded, monkeypatch, app) -> None:
    (job_dir,) = seeded["results"].iterdir()  # the real cpu job the fixture ran
    job_id = job_dir.name
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"job": job_id})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-baseline").value == job_id
    assert "compare-candidate" not in {w.key for w in at.selectbox}
    text = texts(at)
    assert "has no host__time_duration.sum values" not in text  # the old dead end
    assert f"No other job can be compared with `{job_id}`" in text
    assert "h200-ncu-matmul-sweep`: it measures GPU kernel time" in text
    assert not plotly_specs(at)
    at.selectbox(key="compare-baseline").set_value("h200-ncu-matmul-sweep").run()
    assert not at.exception
    offered = at.selectbox(key="compare-candidate").options
    assert job_id not in offered and "h200-ncu-softmax" not in offered  # other metric / kernel
    assert "h200-ncu-roofline" in offered and offered[-1] == "h200-ncu-matmul-sweep"
    assert f"{job_id}`: it measures host wall-clock time" in texts(at)


def test_compare_opens_on_the_pair_named_in_the_url(store, monkeypatch, app) -> None:
    """`kernel-dashboard --compare BASE CAND` prints /compare?baseline=…&candidate=…: the page
    opens on that pair and shows the gate's judgement (ncu vs CUPTI: not comparable)."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "h200-ncu-matmul-sweep",
                               "candidate": "h200-cupti-matmul-sweep"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-baseline").value == "h200-ncu-matmul-sweep"
    assert at.selectbox(key="compare-candidate").value == "h200-cupti-matmul-sweep"
    assert set(at.dataframe[0].value["Verdict"]) == {"not comparable"}
    shown = texts(at)
    assert "15 matching annotation × config pairs: 15 not comparable" in shown
    assert "backend: ncu vs cupti" in shown
    (spec,) = plotly_specs(at)  # the ratios stay, titled as no verdict (a new user's find)
    title = spec["layout"]["title"]["text"]
    assert title.startswith("No verdict, every pair not comparable: ")
    # the ids in full (a user's find: cut short in the title and in four boxes to a row): the
    # title wrapped into lines the narrowest chart draws, the pair said in words above
    lines = title.split("<br>")
    assert len(lines) > 1 and all(len(line) <= 68 for line in lines), lines
    assert " ".join(lines).endswith("h200-cupti-matmul-sweep / h200-ncu-matmul-sweep: "
                                    + metric_roles.readable({}, M.GPU_TIME))  # words, raw name
    assert spec["layout"]["yaxis"]["type"] == "log"  # ratios
    # a bundled example's label is its id: the id alone
    assert pair_line(*(named_job(job, job, lambda j: f"`{j}`") for job in
                       ("h200-cupti-matmul-sweep", "h200-ncu-matmul-sweep"))) in shown
    assert "Download this comparison (self-contained HTML)" in [
        b.proto.label for b in at.get("download_button")]


def test_a_url_pair_that_cannot_be_shown_says_what_is_shown_instead(store, monkeypatch, app
                                                                     ) -> None:
    """A shared link with a job id this dashboard lacks, or a candidate the baseline cannot be
    compared with, showed another pair without a word (new-user trial)."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "no-such-job", "candidate": "h200-cupti-gate-again"})
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning if "no-such-job" in w.value]
    assert "no such job" in warning and "showing the selected job instead" in warning
    at = app("compare", query={"baseline": "h200-cupti-gate-base", "candidate": "h200-ncu-softmax"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value != "h200-ncu-softmax"
    (warning,) = [w.value for w in at.warning if "h200-ncu-softmax" in w.value]
    assert "is not comparable with" in warning and "h200-cupti-gate-base" in warning


def test_backends_names_a_cache_control_mismatch(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("backends", query={"job": "h200-ncu-j1-fp16"})
    at.selectbox(key="backends-ncu").set_value("h200-ncu-elementwise").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="backends-cupti").value == "h200-cupti-elementwise"
    assert "cache control" not in texts(at)
    at.selectbox(key="backends-cupti").set_value("h200-cupti-elementwise-cache-none").run()
    assert not at.exception, at.exception
    (warning,) = [w.value for w in at.warning if "besides the backend" in w.value]
    assert "cache control: all vs none" in unescape(warning)


def test_a_compare_link_of_two_cpu_jobs_has_no_h200_banner(seeded, app) -> None:
    """`kernel-dashboard --compare` on two cpu jobs, on a machine without a GPU: the banner is
    about the pair's baseline, not the bundled H200 job the app would otherwise show (a new
    user read "showing results recorded on NVIDIA H200" above two cpu jobs)."""
    import shutil

    (job_dir,) = seeded["results"].iterdir()
    shutil.copytree(job_dir, seeded["results"] / "cpu-again")
    shutil.copytree(SCENARIOS / "h200-ncu-j1-fp16", seeded["bundled"] / "h200-ncu-j1-fp16")
    at = app("compare", query={"baseline": job_dir.name, "candidate": "cpu-again"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-baseline").value == job_dir.name
    assert "recorded on NVIDIA H200" not in texts(at)


def test_compare_says_the_caveats_and_the_runs_that_block_a_verdict(store, monkeypatch,
                                                                     app) -> None:
    """gate-base -> timeline (issue 34): n = 8192 is not comparable (the timeline's runs are
    two modes) and the page names the caveats beside it: not "clock not checked", a caveat of
    a direction the row does not have."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "h200-cupti-gate-base",
                               "candidate": "h200-cupti-timeline"})
    assert not at.exception, at.exception
    frame = at.dataframe[0].value
    row = frame[frame["n"] == 8192].iloc[0]
    assert row["Verdict"] == "not comparable"
    assert row["Caveats"] == "power-capped runs"
    assert "not one population" in row["Reason"]
    # in the pages' µs, the Reason's evidence too (session 23: 17,242 ns and "(23,895 vs
    # 13,680 ns)" beside Size sweep's 17.2 µs)
    assert set(frame["Unit"]) == {DEFAULT_TIME_UNIT}
    assert DEFAULT_TIME_UNIT in row["Reason"] and " ns" not in " ".join(frame["Reason"])
    assert frame["BaselineAvg"].between(1, 10_000).all()  # µs of a matmul, not ns
    # the metric's words beside its raw name, the key (session 23: the raw name alone)
    assert set(frame["Metric"]) == {M.GPU_TIME}
    assert set(frame[F.METRIC_WORDS]) == {metric_roles.words({}, M.GPU_TIME)}
    warnings = " ".join(unescape(w.value) for w in at.warning)
    assert "1 of 1 verdict carries caveats" in warnings
    assert "n=8192: not comparable (power-capped runs)" in warnings



def _sweep_with_clock_drops(bundled: Path) -> None:
    """The matmul sweep (its runs of fp16 and bf16 n=4096 dropped: the recorded runs pass the
    clock check, which reads a run against its own config's median) and the matmul rules job
    in ``bundled``."""
    import shutil

    from tests.scenarios import clock_drop_dir, scenario_dir

    clock_drop_dir("h200-ncu-matmul-sweep", bundled, [("fp16", 3), ("bf16", 3)])
    shutil.copytree(scenario_dir("h200-ncu-matmul-rules"), bundled / "h200-ncu-matmul-rules")


def test_compare_names_the_region_of_each_caveated_pair(store, app) -> None:
    """Issue 37: matmul sweep -> matmul rules listed "n=4096: not comparable (clock-dropped
    runs)" twice (fp16 and bf16 share the config): each is named by its region."""
    _sweep_with_clock_drops(store["bundled"])
    at = app("compare", query={"baseline": "h200-ncu-matmul-sweep",
                               "candidate": "h200-ncu-matmul-rules"})
    assert not at.exception, at.exception
    (said,) = [unescape(w.value) for w in at.warning if "verdicts carry caveats" in w.value]
    assert "2 of 15 verdicts carry caveats" in said
    for region in ("fp16", "bf16"):
        assert said.count(f"{region} n=4096: not comparable (clock-dropped runs)") == 1

def test_two_contended_cpu_jobs_say_contention_not_measured_differently(store, app) -> None:
    """Issue 37: two cpu jobs of one spec, both timed on a contended CPU (real jobs, the worker
    sharing one CPU with busy loops): the warning names the contention on both sides and the
    recorded field with both values, never "measured differently"; and the table, under the
    "No verdict" title, says no outcome of the runs (a fresh user read TimeOutcome
    "regressed" there) nor the runs a side that would decide the pair."""
    import json

    from profiling_worker.bundle.gate.judge import GateOptions, judge
    from profiling_worker.bundle.gate.sides import GateSide
    from profiling_worker.bundle.schema import columns as C
    from tests.contended_cpu import record_contended_job

    for name in ("busy-a", "busy-b"):
        proc = record_contended_job(store["results"] / name)
        assert proc.returncode == 0, proc.stderr[-2000:]
    waited = [json.loads((store["results"] / n / C.MANIFEST_FILE).read_text())["backend"][
        "host_contention"]["waiting_fraction"] for n in ("busy-a", "busy-b")]
    at = app("compare", query={"baseline": "busy-a", "candidate": "busy-b"})
    assert not at.exception, at.exception
    # the gate's judgement of the pair, whose headline and reasons the warning gives
    gate = judge(*(GateSide.load(store["results"] / n) for n in ("busy-a", "busy-b")),
                 GateOptions())
    (said,) = [unescape(w.value) for w in at.warning
               if gate.context_headline in unescape(w.value)]
    assert all(reason in said for reason in gate.context), (gate.context, said)
    assert "measured differently" not in said
    assert ("backend.host_contention.waiting_fraction" in said
            and f"{waited[0]:,.2f} vs {waited[1]:,.2f}" in said), said
    assert "contended CPU" in gate.context_headline and "both" in gate.context_headline
    frame = at.dataframe[0].value
    assert set(frame["Verdict"]) == set(frame["TimeOutcome"]) == {"not comparable"}
    assert frame["RunsToDecide"].isna().all()
    assert not [r for r in frame["Reason"] if "runs a side would" in r]


def test_jobs_not_offered_are_counted_by_where_they_come_from(seeded, monkeypatch, app) -> None:
    """Issue 37: "27 job(s) not offered as candidate" to a user with 2 jobs of their own: the
    count was over the bundled examples too. The heading counts each group apart, the list
    says what each group is and why each job is not offered."""
    (job_dir,) = seeded["results"].iterdir()  # the real cpu job the fixture ran
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    bundled = [p.name for p in SCENARIOS.iterdir() if (p / "manifest.json").is_file()]
    at = app("compare", query={"job": job_dir.name})
    assert not at.exception, at.exception
    (box,) = [e for e in at.expander if e.label.startswith("Not offered as candidate")]
    assert box.label == ("Not offered as candidate, nothing in common to compare with this "
                         f"baseline: {len(bundled)} bundled examples"), box.label
    listed = unescape(" ".join(m.value for m in box.markdown))
    assert listed.startswith("Bundled examples (recorded on an H200 and shipped with the app")
    assert "`h200-ncu-matmul-sweep`: it measures GPU kernel time" in listed
    at.selectbox(key="compare-baseline").set_value("h200-ncu-matmul-sweep").run()
    at.session_state["own-jobs"] = [job_dir.name]  # as if this session had submitted it
    at.run()
    (box,) = [e for e in at.expander if e.label.startswith("Not offered as candidate")]
    offered = at.selectbox(key="compare-candidate").options  # the baseline last
    refused_bundled = len(bundled) - len(offered)  # neither offered nor the baseline
    assert box.label.endswith(f": 1 job of yours, {refused_bundled} bundled examples"), box.label


def _as_preflight_pass(src: Path, dest: Path) -> None:
    """A copy of the real cpu job ``src`` labelled as Pre-flight labels its pass
    (app.core.preflight.preflight_spec), and started after every other job (the newest)."""
    import json
    import shutil

    from app.core import preflight

    shutil.copytree(src, dest)
    for name in ("manifest.json", "spec.json"):
        raw = json.loads((dest / name).read_text())
        spec = raw.get("spec", raw) if name == "manifest.json" else raw
        spec["label"] = f"{preflight.LABEL} of matmul"
        if name == "manifest.json":
            raw["job_id"], raw["started_at"] = dest.name, "2099-01-01T00:00:00+00:00"
        (dest / name).write_text(json.dumps(raw))


def test_a_preflight_pass_is_offered_on_neither_side(seeded, monkeypatch, app) -> None:
    """A fresh user's find: after Pre-flight, Compare took the pass (2 calls, no warm-up; the
    newest done job) as its default baseline, and the gate judged its runs "ambiguous"."""
    from app.services import result_store
    from app.sidebar.job_selector import default_job

    (job_dir,) = seeded["results"].iterdir()
    _as_preflight_pass(job_dir, seeded["results"] / "pass-1")
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    bundles = result_store.list_bundles(seeded["results"], SCENARIOS)[0]
    assert bundles[0].job_id == "pass-1"  # the newest: what a default would take
    assert default_job(bundles, True).job_id == job_dir.name  # the sidebar opens on the job
    at = app("compare", query={"job": "pass-1"})
    assert not at.exception, at.exception
    baseline = at.selectbox(key="compare-baseline")
    assert "pass-1" not in baseline.options and baseline.value != "pass-1"
    assert all("pass-1" not in s.options for s in at.selectbox if s.key == "compare-candidate")
    from app.core.preflight import pass_line  # what every results page of a pass says
    from profiling_worker.bundle.loader import load_bundle

    said = pass_line(load_bundle(seeded["results"] / "pass-1").spec)
    assert f"{said} `pass-1` is not compared" in texts(at)
    at.selectbox(key="compare-baseline").set_value(job_dir.name).run()
    assert not at.exception
    assert "`pass-1`:" not in texts(at)  # not even among the jobs not offered


def test_text_columns_are_as_wide_as_their_values(store, app) -> None:
    """A fresh user's find: Compare's Verdict read "not com…" and Caveats "clock-dro…" at 1400
    and 1000 px: the grid sized a text column by its header. Every text column whose values
    are longer than its header now has a width that fits them (up to panels.TEXT_WIDTH_MAX)."""
    import json

    from app.ui.panels import TEXT_WIDTH_MAX

    _sweep_with_clock_drops(store["bundled"])
    at = app("compare", query={"baseline": "h200-ncu-matmul-sweep",
                               "candidate": "h200-ncu-matmul-rules"})
    assert not at.exception, at.exception
    table = at.dataframe[0]
    frame, columns = table.value, json.loads(table.proto.columns)
    assert "not comparable" in set(frame["Verdict"]) and frame["Caveats"].str.len().max() > 7
    for name in ("Verdict", "Caveats", "Reason"):
        longest = int(frame[name].dropna().astype(str).str.len().max())
        assert columns[name]["width"] >= min(longest * 7, TEXT_WIDTH_MAX), (name, columns[name])


def test_a_job_wide_caveats_evidence_is_said_once_on_the_page_and_in_the_report(
        store, monkeypatch, app) -> None:
    """The gate's Reason names a job-wide caveat's runs only (its evidence was repeated per
    config): the page says the evidence once under its caveats warning, as the report does."""
    from app.core.share.build import comparison_report
    from profiling_worker.bundle.loader import load_bundle

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    pair = ("h200-cupti-stability", "h200-cupti-stability-thermal-off")
    at = app("compare", query={"baseline": pair[0], "candidate": pair[1]})
    assert not at.exception, at.exception
    said = "recorded without the L2 flush although the spec asks"
    assert texts(at).count(said) == 2, texts(at)  # once per side, not once per config
    html = comparison_report(*(load_bundle(SCENARIOS / job) for job in pair))
    assert "Caveats of whole jobs: L2 warm against the spec in the baseline" in html


def test_a_not_comparable_pair_shows_no_outcome_of_its_runs(store, monkeypatch, app) -> None:
    """A fresh user's find: two contended cpu jobs were titled "No verdict, every pair not
    comparable" while the table's TimeOutcome said "regressed" for three rows. The ncu sweep
    against the roofline job (metric sets differ) at 1 % allowed, where several rows' time
    alone is beyond ±1 %: the title and every outcome column say not comparable, no row a
    runs estimate, and each Reason gives the figures (ratio CI) without an outcome."""
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("compare", query={"baseline": "h200-ncu-matmul-sweep",
                               "candidate": "h200-ncu-roofline"})
    at.number_input(key="compare-max-slowdown").set_value(1.0).run()
    assert not at.exception, at.exception
    (spec,) = plotly_specs(at)
    assert spec["layout"]["title"]["text"].startswith("No verdict, every pair not comparable: ")
    frame = at.dataframe[0].value
    for column in ("Verdict", "TimeOutcome", "CyclesOutcome"):
        assert set(frame[column].dropna()) == {"not comparable"}, column
    assert frame["RunsToDecide"].isna().all()
    judged = [r for r in frame["Reason"] if "the runs alone: " in r]
    assert len(judged) == 12 and not [r for r in judged if "runs a side would" in r
                                      or "so the clock explains" in r]


def test_the_page_judges_the_pair_once(store, monkeypatch, app) -> None:
    """Issue 37: the page judged the pair for its table and again for its counts, half of its
    42 s CPU at 10,000 configs; one judgement feeds both, the same table as judged apart."""
    import pandas as pd

    from app.core.views import compare as V
    from profiling_worker.bundle.loader import load_bundle

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    calls = []
    judge = V.gate.judge  # the judgement module the views call
    monkeypatch.setattr(V.gate, "judge", lambda *a, **k: calls.append(1) or judge(*a, **k))
    at = app("compare", query={"job": "h200-cupti-gate-again"})
    assert not at.exception, at.exception
    assert len(calls) == 1
    base, cand = (load_bundle(SCENARIOS / j) for j in ("h200-cupti-gate-base",
                                                       "h200-cupti-gate-again"))
    options = V.CompareOptions(metric=base.duration_metric)
    pd.testing.assert_frame_equal(
        V.compare_frame(base, cand, options, judged=V.gate_result(base, cand, options)),
        V.compare_frame(base, cand, options))


def _labelled_copy(results: Path, job: str, label: str) -> None:
    """The seeded cpu job again as ``results/<job>``, its spec labelled ``label`` (README's
    step 5 runs its gate pair into results/base and results/candidate, so labelled)."""
    import json
    import shutil

    from apptest_helpers import JOB_ID

    shutil.copytree(results / JOB_ID, results / job)
    for name in ("manifest.json", "spec.json"):
        path = results / job / name
        data = json.loads(path.read_text(encoding="utf-8"))
        spec = data.setdefault("spec", {}) if name == "manifest.json" else data
        spec["label"] = label
        if name == "manifest.json":
            data["job_id"] = job
        path.write_text(json.dumps(data), encoding="utf-8")


def test_the_pair_is_named_by_the_jobs_labels(seeded, app) -> None:
    """A fresh user of session 21 read "Candidate candidate against baseline base": the
    README's folder names, not the labels the jobs were given (gate candidate, gate
    baseline). The pair line gives each label with its id."""
    results = seeded["results"]
    sides = {"candidate": "gate candidate", "base": "gate baseline"}
    for job, label in sides.items():
        _labelled_copy(results, job, label)
    at = app("compare", query={"baseline": "base", "candidate": "candidate"})
    assert not at.exception, at.exception
    assert at.selectbox(key="compare-candidate").value == "candidate"
    said = pair_line(*(named_job(job, label, lambda j: f"`{j}`") for job, label in sides.items()))
    assert said in texts(at)
    assert "gate candidate" in said and "gate baseline" in said


def _summaries():
    """The bundled scenarios as the Compare page sums them up (its pickers' jobs)."""
    from app.core.provenance import is_imported
    from app.core.views.compare import JobSummary
    from app.services import result_store

    bundles, _ = result_store.list_bundles(Path("/nonexistent"), SCENARIOS)
    return [JobSummary.of(b.job_id, b.created_at, b.spec, is_imported(b.manifest), b.manifest)
            for b in bundles]


def test_a_named_job_opens_on_a_baseline_measured_like_it(store, monkeypatch, app) -> None:
    """A fresh user of session 21 opened Compare on ?job=h200-ncu-matmul-sweep: its baseline
    was one the gate then called not comparable. A job with a job measured like it opens on
    one; a job with none says so, of that job, above the ratios."""
    from app.core.views.compare import alike_jobs

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    jobs = _summaries()
    at = app("compare", query={"job": "h200-cupti-matmul-sweep"})
    (other,) = set(shown_pair(at)) - {"h200-cupti-matmul-sweep"}
    assert other in alike_jobs("h200-cupti-matmul-sweep", jobs)
    assert not [w for w in at.warning if "Not comparable" in w.value]
    job = "h200-ncu-matmul-sweep"
    assert alike_jobs(job, jobs) == []  # the bundled job no other was measured like
    at = app("compare", query={"job": job})
    pair = shown_pair(at)
    (other,) = set(pair) - {job}
    assert pair == in_time(job, other), pair
    shown = texts(at)
    assert none_alike_text(job, other, lambda j: f"`{j}`") in shown
    assert "No job here is comparable with" not in shown  # said once, of the job named
