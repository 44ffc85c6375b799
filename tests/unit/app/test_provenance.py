"""The provenance banner says where the shown job's numbers come from, from its manifest."""

from __future__ import annotations

from pathlib import Path

from app.core.provenance import (ANNOTATED_SCOPE, NCU_IMPORT_SCOPE, banner, host_timer_warning,
                                 profiled_scope)
from profiling_worker.importing import import_nsight_output
from profiling_worker.bundle.schema.manifest import JobStatus, read_manifest
from tests.scenarios import SCENARIOS, scenario_report

REPO = Path(__file__).resolve().parents[3]
PLAIN = REPO / "tests" / "fixtures" / "h200_import" / "ncu_plain"
NORMALIZED = REPO / "tests" / "fixtures" / "h200_import" / "nspy096" / "normalized"


def test_worker_job_names_its_gpu_and_the_worker() -> None:
    manifest = read_manifest(SCENARIOS / "h200-ncu-softmax")
    assert banner(manifest, gpu_here=False) == (
        "No GPU here: showing results recorded on NVIDIA H200 by this project's worker")
    assert banner(manifest, gpu_here=True) is None


def test_the_banner_names_the_jobs_gpu_not_gpu_0() -> None:
    """A tester's find: a job run on NVML GPU 1 of a host with an H100 at index 0 was shown as
    "recorded on NVIDIA H100 PCIe" on every page (the banner read GPU 0), while the Environment
    page, the clocks and the roofline peaks used the job's GPU."""
    import copy

    manifest = copy.deepcopy(read_manifest(SCENARIOS / "h200-ncu-softmax"))
    h200 = manifest["environment"]["gpus"][0]
    manifest["environment"]["gpus"] = [{**h200, "index": 0, "name": "NVIDIA H100 PCIe"},
                                       {**h200, "index": 1}]
    manifest["gpu"] = {**manifest.get("gpu", {}), "index": 1, "nvml_index": 1}
    manifest["spec"]["gpu"] = 1
    assert banner(manifest, gpu_here=False) == (
        "No GPU here: showing results recorded on NVIDIA H200 by this project's worker")
    # the same GPU reached as "gpu": 0 under CUDA_VISIBLE_DEVICES=1
    manifest["gpu"] = {"index": 0, "nvml_index": 1, "visible_devices": "1"}
    manifest["spec"]["gpu"] = 0
    assert "recorded on NVIDIA H200" in str(banner(manifest, gpu_here=False))

def test_imported_report_says_imported_from_which_file(tmp_path: Path) -> None:
    bundle = import_nsight_output([PLAIN / "plain.ncu-rep.gz"], tmp_path, "rep")
    for gpu_here in (False, True):
        text = banner(read_manifest(bundle), gpu_here)
        assert text is not None and text.startswith(
            "Imported job: values read from `plain.ncu-rep.gz` (Nsight Compute report)")
        assert "recorded by this project's worker" in text and "not recorded" in text


def test_an_import_whose_files_name_no_gpu_says_so_in_a_whole_sentence(tmp_path: Path) -> None:
    """A fresh user's find: Nsight Compute console text that names no GPU gave "values read
    from `x.txt` (Nsight Compute console text) elsewhere, not recorded ...": the GPU's words
    were left out and "elsewhere" hung on nothing."""
    console = REPO / "tests" / "fixtures" / "import_cases" / "16-ncu-2020-console"
    bundle = import_nsight_output([console / "hpc2n_ax_locale.txt"], tmp_path, "text")
    text = banner(read_manifest(bundle), False)
    assert text is not None and ") elsewhere" not in text
    assert ", measured elsewhere on a GPU the files do not name, not recorded by this " \
        "project's worker" in text


def test_imported_csvs_name_kinds_and_nsight_python_version(tmp_path: Path) -> None:
    csvs = sorted(NORMALIZED.glob("*.csv"))
    text = banner(read_manifest(import_nsight_output(csvs, tmp_path, "csv")), False)
    assert text is not None
    assert "`processed_data-scale-0.csv`, `profiled_data-scale-0.csv`" in text
    assert ("nsight-python aggregated CSV (processed_data); nsight-python per-run CSV "
            "(profiled_data)") in text
    assert "nsight-python 0.9.6" in text


def test_files_given_but_not_read_are_not_claimed_as_sources(tmp_path: Path) -> None:
    j1 = scenario_report("h200-ncu-j1-fp16")
    bundle = import_nsight_output([PLAIN / "plain.ncu-rep.gz", j1, *sorted(
        NORMALIZED.glob("*.log"))], tmp_path, "two")
    text = banner(read_manifest(bundle), False)
    assert text is not None and text.startswith(
        "Imported job: values read from `plain.ncu-rep.gz` (Nsight Compute report)")
    assert text.endswith(f"; given but not read: `{j1.name}`")
    assert ".log" not in text


def test_missing_metric_hint_of_an_import_says_profile_again_and_import(tmp_path: Path) -> None:
    from profiling_worker.bundle.loader import load_bundle
    from app.core.metrics import missing_metric

    cupti = SCENARIOS / "h200-cupti-stability" / "nsight" / "c0"
    bundle = load_bundle(import_nsight_output(sorted(cupti.glob("*.csv")), tmp_path, "c"))
    err = missing_metric(bundle, ("sm__throughput.avg.pct_of_peak_sustained_elapsed",), "SM %")
    assert err.hint == ("Profile again with Nsight Compute collecting sm__throughput.avg."
                        "pct_of_peak_sustained_elapsed (nsight-python metrics=[...] on its ncu "
                        "backend, or ncu --metrics) and import the output.")
    worker = load_bundle(SCENARIOS / "h200-cupti-stability")
    assert "preset on the ncu backend" in missing_metric(
        worker, ("sm__throughput.avg.pct_of_peak_sustained_elapsed",), "SM %").hint


def test_profiled_scope_follows_provenance(tmp_path: Path) -> None:
    """A plain report (no NVTX) or ncu CSV import: regions are kernel names, not
    nsight.annotate; nsight-python CSVs and worker jobs keep the annotated-region sentence."""
    for name in ("plain.ncu-rep.gz", "raw.csv"):
        scope = profiled_scope(read_manifest(import_nsight_output([PLAIN / name], tmp_path,
                                                                  name.split(".")[0])))
        assert scope == NCU_IMPORT_SCOPE and "kernel's name" in scope
        assert "nsight.annotate" not in scope
    csvs = sorted(NORMALIZED.glob("*.csv"))
    assert profiled_scope(read_manifest(import_nsight_output(csvs, tmp_path, "csv"))) \
        == ANNOTATED_SCOPE
    assert profiled_scope(read_manifest(SCENARIOS / "h200-ncu-softmax")) \
        == ANNOTATED_SCOPE


def test_the_cpu_backend_warning_speaks_in_the_jobs_tense() -> None:
    # issue 37: a queued cpu job read "This job used the cpu backend" before it had run
    said = {s: host_timer_warning(s) for s in JobStatus}
    assert said[JobStatus.QUEUED].startswith("Every time this job records will be host")
    assert all(said[s].startswith("Every time here is host") for s in JobStatus
               if s is not JobStatus.QUEUED)
