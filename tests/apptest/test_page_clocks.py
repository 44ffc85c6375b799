"""Clocks and thermal page on bundled H200 jobs: NVML trace, collectors sampled before each run,
kernel clocks, thermal_mode comparison; and a job without collectors."""

from __future__ import annotations

from apptest_helpers import JOB_ID, plotly_specs, texts
from app.core.views.timeline import TIMELINE_RUN_ORDER, TIMELINE_RUN_ORDER_HOST
from tests.scenarios import SCENARIOS


def _open(app, monkeypatch, job: str):
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("clocks_thermal", query={"job": job})
    assert not at.exception, at.exception
    return at


def test_stability_job_with_collectors(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-stability")
    titles = [s["layout"]["title"]["text"].replace("<br>", " ") for s in plotly_specs(at)]
    assert titles[0].startswith("NVML trace of the whole job")
    assert titles[1].startswith("Timeline: launches back to back in run order")
    assert any("sampled before the run" in t for t in titles[2:4])
    assert titles[-1] == "Run-to-run spread per config, by thermal_mode"
    text = texts(at)
    assert "nvmlClocksEventReasons" in text and "gpc__cycles_elapsed" in text
    assert "differ by at most 0.49 %" in text
    frames = [d.value for d in at.dataframe]
    walls = next(f for f in frames if list(f.columns) == ["Job", "ThermalMode", "WallS"])
    assert walls["ThermalMode"].tolist() == ["auto", "off"]
    reasons = next(f for f in frames if "Reason" in f.columns)
    assert reasons["Reason"].tolist() == ["GPU idle"]
    launches = next(f for f in frames if "Track" in f.columns)
    assert len(launches) == 90 and set(launches["Track"]) == {"region fp16"}
    assert "no kernel start times" in text
    assert at.selectbox(key="clocks-config").value == 0  # first config by default
    at.selectbox(key="clocks-config").set_value(None).run()
    assert not at.exception


def test_ncu_job_without_collectors_points_to_the_trace(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-ncu-matmul-sweep")
    text = texts(at)
    assert "The NVML trace above was sampled during the whole job" in text
    # the section is named as text: esc() made Markdown's *emphasis* literal asterisks
    assert "(see the section 'What each clock source measures')" in text and "*What" not in text
    assert "the clock the kernels actually ran at" not in text  # issue 11, case 8
    assert "**NVML trace (the worker's sampler)** measures" in text
    assert "kernels shorter than 50 ms mostly fall between samples" in text
    titles = [s["layout"]["title"]["text"] for s in plotly_specs(at)]
    assert any("SM clock the kernels ran at" in t for t in titles)


def test_the_trace_button_says_it_downloads_a_file_for_perfetto(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-timeline")
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download the trace for the Perfetto UI (ui.perfetto.dev: Open trace file)" in labels
    assert not [label for label in labels if "opens in" in label]  # it downloads, opens nothing


def test_cpu_job_has_no_trace(seeded, app) -> None:
    at = app("clocks_thermal")
    assert not at.exception
    assert "no NVML trace" in texts(at) or plotly_specs(at)
    assert "The NVML trace above" not in texts(at)  # said once under 'no NVML trace' before
    # its timeline in a cpu job's words: no Nsight Compute, CUPTI or NVML trace named there
    assert TIMELINE_RUN_ORDER_HOST in texts(at) and TIMELINE_RUN_ORDER not in texts(at)


def _thermal_titles(at) -> list[str]:
    return [t for s in plotly_specs(at) if "thermal_mode" in (t := s["layout"]["title"]["text"])]


def test_thermal_comparison_needs_two_thermal_modes(store, app) -> None:
    """Two jobs, both thermal_mode auto: the page says so instead of comparing them."""
    import shutil

    for job in ("h200-cupti-stability", "h200-cupti-matmul-sweep"):
        shutil.copytree(SCENARIOS / job, store["bundled"] / job)
    at = app("clocks_thermal", query={"job": "h200-cupti-stability"})
    assert not at.exception, at.exception
    assert "with different thermal_mode, so there is nothing to compare" in texts(at)
    assert not _thermal_titles(at)
    assert not any("ThermalMode" in d.value.columns for d in at.dataframe)


def test_cpu_jobs_are_no_thermal_mode_pair(seeded, app) -> None:
    """A fresh user's find: two cpu jobs that differ only in thermal_mode (the form sent it with
    the cpu backend before it was greyed out there) were compared as if it had paused them; the
    cpu backend applies no thermal_mode, so only ncu and cupti jobs are paired."""
    import json
    import shutil

    twin = seeded["results"] / f"{JOB_ID}-off"
    shutil.copytree(seeded["results"] / JOB_ID, twin)
    manifest = json.loads((twin / "manifest.json").read_text())
    manifest["job_id"], manifest["spec"]["thermal_mode"] = twin.name, "off"
    (twin / "manifest.json").write_text(json.dumps(manifest))
    at = app("clocks_thermal", query={"job": JOB_ID})
    assert not at.exception, at.exception
    assert ("This needs two finished jobs of a backend that applies thermal_mode (ncu or cupti), "
            "e.g. the same kernels with thermal_mode auto and off.") in texts(at)
    assert not _thermal_titles(at)


def test_thermal_comparison_of_a_job_with_itself_is_refused(store, monkeypatch, app) -> None:
    at = _open(app, monkeypatch, "h200-cupti-stability-thermal-off")
    assert at.selectbox(key="clocks-thermal-a").value == "h200-cupti-stability-thermal-off"
    assert at.selectbox(key="clocks-thermal-b").value == "h200-cupti-stability"
    assert len(_thermal_titles(at)) == 1
    at.selectbox(key="clocks-thermal-b").set_value("h200-cupti-stability-thermal-off").run()
    assert not at.exception, at.exception
    assert "a job compared with itself" in texts(at) and not _thermal_titles(at)
    at.selectbox(key="clocks-thermal-b").set_value("h200-cupti-j1-fp16").run()
    assert "Both jobs ran with thermal_mode" not in texts(at)
    assert "not only in thermal_mode" in texts(at) and len(_thermal_titles(at)) == 1
