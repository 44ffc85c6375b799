"""import_nsight_output on real H200 nsight-python 0.9.6 output, 1.x-style files and junk."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.writer import table_columns, table_csv
from profiling_worker.importing import ImportFailed, import_nsight_output
from profiling_worker.importing.nsight_values import RULE_NSIGHT_COMBINED
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema.manifest import read_manifest
from profiling_worker.bundle.schema.spec import load_spec

REPO = Path(__file__).resolve().parents[4]
REF = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul"
RAW = REF / "profiled_data-mm-0.csv"
AGG = REF / "processed_data-mm-0.csv"


@pytest.fixture(scope="module")
def reference_bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("store")
    return import_nsight_output([REF], out, "h200-mm")


def test_reference_bundle_layout(reference_bundle):
    b = reference_bundle
    for name in C.TABLES:
        assert (b / C.TABLES_DIR / f"{name}.parquet").is_file()
        # Parquet only (issue 40): the CSV is made from it on download
        assert not (b / C.TABLES_DIR / f"{name}.csv").exists() and table_csv(b, name)
        assert list(read_table(b, name).columns) == table_columns(
            name, [] if name == C.TABLE_NVML else ["n"])
    for f in ("profiled_data-mm-0.csv", "processed_data-mm-0.csv", "ncu-output-mm-0.log"):
        assert (b / C.NSIGHT_DIR / f).read_bytes() == (REF / f).read_bytes()
    assert not [p for p in b.parent.iterdir() if p.name.startswith(".import-")]


def test_reference_manifest_and_spec(reference_bundle):
    m = read_manifest(reference_bundle)
    assert m["status"] == "done" and m["job_id"] == "h200-mm"
    assert m["backend"] == {"name": "ncu", "measurement": "imported nsight-python output"}
    prov = m["provenance"]
    assert "profiled_data-mm-0.csv" in prov["imported_from"]
    assert all("/" not in n for n in prov["imported_from"])  # names, never absolute paths
    assert prov["date"] and prov["nsight_python_version"].startswith("0.9.6")
    assert m["environment"]["gpu_name"] == "NVIDIA H200"
    spec = load_spec(str(reference_bundle / C.SPEC_FILE))
    assert [dict(c) for c in spec.configs] == [{"n": 1024}, {"n": 4096}]
    assert spec.runs == 3 and spec.kernels == ("mm",)
    assert C.GPU_TIME in spec.metrics
    assert "tables/runs.parquet" in m["files"]  # the manifest lists the other files


def test_reference_runs(reference_bundle):
    runs = read_table(reference_bundle, C.TABLE_RUNS)
    assert len(runs) == 18  # 2 configs x 3 runs x 3 metrics
    assert runs[C.RUN].tolist().count(0) == 6
    assert set(runs[C.COMBINE_RULE]) == {"single"}
    first = runs[(runs["n"] == 1024) & (runs[C.METRIC] == C.GPU_TIME)]
    assert first[C.VALUE].tolist() == [61344.0, 61472.0, 61504.0]
    assert first[C.CONFIG].unique().tolist() == [0]
    assert set(runs.loc[runs[C.METRIC] == C.GPU_TIME, C.UNIT]) == {"ns"}  # inferred for 0.9.x
    raw = pd.read_csv(RAW)
    assert sorted(runs[C.VALUE]) == sorted(raw["Value"])


def test_reference_aggregated_equals_nsight_values(reference_bundle):
    agg = read_table(reference_bundle, C.TABLE_AGGREGATED)
    ref = pd.read_csv(AGG)
    merged = agg.merge(ref, on=["Annotation", "Metric", "n"], suffixes=("", "_nsight"))
    assert len(merged) == len(ref) == 6
    for col in ("AvgValue", "StdDev", "MinValue", "MaxValue", "RelativeStdDevPct"):
        assert merged[col].tolist() == pytest.approx(merged[f"{col}_nsight"].tolist(), rel=1e-12)
    assert (merged["NumRuns"] == merged["NumRuns_nsight"]).all()
    assert (merged["StableMeasurement"] == merged["StableMeasurement_nsight"]).all()
    # Student-t with 2 dof is wider than nsight-python's 1.96 sigma, around the same mean.
    assert (merged["CI95_Lower"] < merged["CI95_Lower_nsight"]).all()
    assert (merged["CI95_Upper"] > merged["CI95_Upper_nsight"]).all()
    assert merged[C.KERNELS].tolist() == [1.0] * 6


def test_processed_only_is_taken_as_is_with_a_student_t_interval(tmp_path):
    b = import_nsight_output([AGG], tmp_path, "agg-only")
    agg = read_table(b, C.TABLE_AGGREGATED)
    ref = pd.read_csv(AGG)
    assert agg[C.AVG].tolist() == ref["AvgValue"].tolist()
    t = scipy_stats.t.ppf(0.975, ref["NumRuns"] - 1)
    expected = ref["AvgValue"] - t * ref["StdDev"] / ref["NumRuns"] ** 0.5
    assert np.allclose(agg[C.CI95_LOWER], expected, rtol=1e-12)
    assert agg[C.CONFIG].tolist() == [0, 0, 0, 1, 1, 1]
    assert agg[C.MEDIAN].isna().all()
    assert read_table(b, C.TABLE_RUNS).empty
    assert "Student-t" in " ".join(read_manifest(b)["provenance"]["aggregated"])


def _v1_files(tmp_path: Path) -> list[Path]:
    """The reference files rewritten the way nsight-python 1.x writes them (Unit column)."""
    raw = pd.read_csv(RAW)
    raw.insert(raw.columns.get_loc("MemoryClock") + 1, "Unit",
               raw["Metric"].map(lambda m: "ns" if "duration" in m else "%"))
    agg = pd.read_csv(AGG)
    agg.insert(agg.columns.get_loc("MemoryClock") + 1, "Unit",
               agg["Metric"].map(lambda m: "ns" if "duration" in m else "%"))
    d = tmp_path / "v1"
    d.mkdir()
    raw.to_csv(d / "profiled_data-bench-3.csv", index=False)
    agg.to_csv(d / "processed_data-bench-3.csv", index=False)
    return [d / "profiled_data-bench-3.csv", d / "processed_data-bench-3.csv"]


def test_v1_files_with_unit_column(tmp_path):
    b = import_nsight_output(_v1_files(tmp_path), tmp_path / "store", "v1")
    runs = read_table(b, C.TABLE_RUNS)
    assert set(runs[C.UNIT]) == {"ns", "%"}
    m = read_manifest(b)
    assert m["provenance"]["nsight_python_version"].startswith("1.")
    assert m["spec"]["kernels"] == ["bench"]


def test_renamed_csv_is_recognised_by_its_columns(tmp_path):
    shutil.copy(RAW, tmp_path / "my run.csv")
    b = import_nsight_output([tmp_path / "my run.csv"], tmp_path / "store", "renamed")
    assert len(read_table(b, C.TABLE_RUNS)) == 18


def test_combined_kernels_and_varying_counts_per_config(tmp_path):
    """One decorated call per config (the fix for 'Expect same number of kernels per run'):
    n=512 launched two kernels merged by combine_kernel_metrics, n=1024 one."""
    rows = ["Annotation,Value,Metric,Kernel,GPU,Host,ComputeClock,MemoryClock,n"]
    for r in range(3):
        rows.append(f"fp32,{40000 + r},gpu__time_duration.sum,splitk_a|splitk_b,NVIDIA H200,vm,"
                    "1980000,3201000,512")
    (tmp_path / "profiled_data-mm-0.csv").write_text("\n".join(rows) + "\n")
    rows = rows[:1] + [f"fp32,{61344 + r},gpu__time_duration.sum,sm80_xmma,NVIDIA H200,vm,"
                       "1980000,3201000,1024" for r in range(3)]
    (tmp_path / "profiled_data-mm-1.csv").write_text("\n".join(rows) + "\n")
    b = import_nsight_output([tmp_path], tmp_path / "store", "sweep")
    runs = read_table(b, C.TABLE_RUNS)
    by_cfg = runs.groupby("n")
    assert by_cfg[C.KERNELS].unique().to_dict() == {512: [2], 1024: [1]}
    assert set(runs.loc[runs["n"] == 512, C.COMBINE_RULE]) == {RULE_NSIGHT_COMBINED}
    agg = read_table(b, C.TABLE_AGGREGATED)
    assert agg.set_index("n")[C.AVG].to_dict() == {512: 40001.0, 1024: 61345.0}
    assert agg[C.CONFIG].tolist() == [0, 1]


def test_unicode_annotation(tmp_path):
    text = RAW.read_text().replace("matmul", "матмул-µ✓")
    (tmp_path / "profiled_data-x-0.csv").write_text(text, encoding="utf-8")
    b = import_nsight_output([tmp_path / "profiled_data-x-0.csv"], tmp_path / "s", "u")
    assert set(read_table(b, C.TABLE_RUNS)[C.ANNOTATION]) == {"матмул-µ✓"}


def test_existing_bundle_is_never_overwritten(tmp_path, reference_bundle):
    (tmp_path / "taken").mkdir()
    with pytest.raises(ImportFailed, match="already exists"):
        import_nsight_output([REF], tmp_path, "taken")


@pytest.mark.parametrize("job_id", ["../x", "a/b", "", ".hidden", "x" * 300])
def test_bad_job_id(tmp_path, job_id):
    with pytest.raises(ImportFailed):
        import_nsight_output([REF], tmp_path, job_id)


def test_no_csv_among_sources(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ImportFailed, match="no nsight-python CSV") as exc:
        import_nsight_output([tmp_path], tmp_path / "s", "j")
    assert exc.value.hint and exc.value.to_event_fields()["kind"] == "import_failed"
    with pytest.raises(ImportFailed, match="no such file"):
        import_nsight_output([tmp_path / "missing.csv"], tmp_path / "s", "j")


HEADER = RAW.read_text().splitlines()[0]
ROW = RAW.read_text().splitlines()[1]

MALFORMED = {
    "empty": b"",
    "blank lines": b"\n\n\n",
    "header only": (HEADER + "\n").encode(),
    "binary": bytes(range(256)) * 4,
    "latin-1": ("Annotation,Value,Metric,n\nm\xe4tmul,1.0,gpu__time_duration.sum,1\n").encode("latin-1"),
    "wrong columns": b"a,b,c\n1,2,3\n",
    "duplicate columns": ("Annotation,Value,Value,Metric,n\nm,1,2,x.sum,3\n").encode(),
    "truncated row": (HEADER + "\n" + ROW + "\n" + ROW[: len(ROW) // 2]).encode(),
    "extra field": (HEADER + "\n" + ROW + ",extra\n").encode(),
    "text value": (HEADER + "\n" + ROW.replace("61344.0", "fast")).encode(),
    "empty annotation": (HEADER + "\n" + ROW.replace("matmul", "", 1)).encode(),
    "reserved parameter": (HEADER.replace(",n", ",Run") + "\n" + ROW).encode(),
    "unterminated quote": (HEADER + '\n"matmul,1.0\n').encode(),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_inputs_raise_import_failed_naming_the_file(tmp_path, case):
    path = tmp_path / "profiled_data-bad-0.csv"
    path.write_bytes(MALFORMED[case])
    store = tmp_path / "store"
    with pytest.raises(ImportFailed) as exc:
        import_nsight_output([path], store, "bad")
    assert "profiled_data-bad-0.csv" in exc.value.message, exc.value.message
    assert exc.value.hint
    assert not store.exists() or not any(store.iterdir())  # nothing left behind


@pytest.mark.filterwarnings("error::RuntimeWarning")  # a lone value's median overflowed a + b
def test_huge_but_finite_values_import(tmp_path):
    text = HEADER + "\n" + ROW.replace("61344.0", "1.7e308") + "\n"
    path = tmp_path / "profiled_data-big-0.csv"
    path.write_text(text)
    b = import_nsight_output([path], tmp_path / "s", "big")
    assert read_table(b, C.TABLE_RUNS)[C.VALUE].tolist() == [1.7e308]


def test_big_parameter_values_stay_exact(tmp_path):
    text = HEADER + "\n" + ROW.replace(",1024", ",123456789012345678") + "\n"
    path = tmp_path / "profiled_data-p-0.csv"
    path.write_text(text)
    b = import_nsight_output([path], tmp_path / "s", "p")
    assert read_table(b, C.TABLE_RUNS)["n"].tolist() == [123456789012345678]
    assert json.loads((b / C.SPEC_FILE).read_text())["configs"] == [{"n": 123456789012345678}]


# --- fuzz ------------------------------------------------------------------------------------

_REF_TEXT = RAW.read_text()


@st.composite
def mangled_csv(draw):
    kind = draw(st.sampled_from(["mutate", "truncate", "random", "rows"]))
    if kind == "random":
        return draw(st.text(max_size=400))
    if kind == "truncate":
        return _REF_TEXT[: draw(st.integers(0, len(_REF_TEXT)))]
    if kind == "rows":
        cells = st.one_of(st.text(max_size=12), st.sampled_from(
            ["", "nan", "1e999", "-0", "9" * 40, "\"", ",", "\n", "NaN", "True", "µ"]),
            st.floats(allow_nan=True, allow_infinity=True).map(repr))
        rows = draw(st.lists(st.lists(cells, min_size=9, max_size=9), max_size=6))
        return HEADER + "\n" + "\n".join(",".join(r) for r in rows)
    text = _REF_TEXT
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(text)))
        junk = draw(st.sampled_from([",", "\"", "\n", "", "x", "1e999", "\u2603", "\r", "-"]))
        cut = draw(st.integers(0, 5))
        text = text[:pos] + junk + text[pos + cut:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mangled_csv(), as_bytes=st.booleans())
def test_fuzz_importer_gives_a_bundle_or_import_failed(text, as_bytes):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "profiled_data-fuzz-0.csv"
        if as_bytes:
            path.write_bytes(text.encode("utf-8", "surrogatepass"))
        else:
            path.write_text(text, encoding="utf-8", errors="replace")
        try:
            bundle = import_nsight_output([path], tmp / "store", "fuzz")
        except ImportFailed as exc:
            assert exc.message and exc.hint
            leftovers = list((tmp / "store").iterdir()) if (tmp / "store").exists() else []
            assert leftovers == []
            return
        assert read_manifest(bundle)["status"] == "done"
        runs = read_table(bundle, C.TABLE_RUNS)
        agg = read_table(bundle, C.TABLE_AGGREGATED)
        assert not runs.empty and not agg.empty
        assert (agg[C.NUM_RUNS] >= 0).all()


def test_v1_1_collector_columns_are_not_taken_for_parameters(tmp_path):
    """1.1 puts info-collector columns between Unit and the parameters; the aggregated CSV
    (parameters between Metric and AvgValue) tells them apart."""
    raw = pd.read_csv(RAW)
    raw.insert(raw.columns.get_loc("MemoryClock") + 1, "Unit", "ns")
    raw.insert(raw.columns.get_loc("Unit") + 1, "sm_clock_mhz", [1980 - i for i in range(18)])
    agg = pd.read_csv(AGG)
    agg.insert(agg.columns.get_loc("MemoryClock") + 1, "Unit", "ns")
    agg.insert(agg.columns.get_loc("Unit") + 1, "sm_clock_mhz_Avg", 1975.0)
    raw.to_csv(tmp_path / "profiled_data-k-0.csv", index=False)
    agg.to_csv(tmp_path / "processed_data-k-0.csv", index=False)
    b = import_nsight_output([tmp_path], tmp_path / "s", "collectors")
    runs = read_table(b, C.TABLE_RUNS)
    assert "sm_clock_mhz" not in runs.columns
    assert runs[C.CONFIG].nunique() == 2
    prov = read_manifest(b)["provenance"]
    assert prov["parameters"] == ["n"]
    assert "sm_clock_mhz" in prov["collectors"]
    coll = read_table(b, C.TABLE_COLLECTORS)
    assert set(coll[C.COLLECTOR]) == {"sm_clock_mhz"} and len(coll) == 6  # 2 configs x 3 runs


def test_param_names_override(tmp_path):
    raw = pd.read_csv(RAW)
    raw.insert(raw.columns.get_loc("n"), "sm_clock_mhz", [1980 - i for i in range(18)])
    raw.to_csv(tmp_path / "profiled_data-k-0.csv", index=False)
    b = import_nsight_output([tmp_path / "profiled_data-k-0.csv"], tmp_path / "s", "o",
                             param_names=["n"])
    assert read_table(b, C.TABLE_RUNS)[C.CONFIG].nunique() == 2
    with pytest.raises(ImportFailed, match="no column for parameter"):
        import_nsight_output([tmp_path / "profiled_data-k-0.csv"], tmp_path / "s", "o2",
                             param_names=["m"])


def test_recomputed_ci95_is_noted_with_the_files_own_method(tmp_path: Path) -> None:
    """nsight-python's CI95 (mean ± 1.96·s/√n) is replaced by the Student-t interval under the
    same column names: the manifest's notes (shown on the pages) say so for the file."""
    folder = REPO / "tests" / "fixtures" / "h200_import" / "nspy096" / "normalized"
    processed = folder / "processed_data-scale-0.csv"
    written = pd.read_csv(processed)
    half = (written["CI95_Upper"] - written["CI95_Lower"]) / 2  # the file's own: z interval
    assert np.allclose(half, 1.96 * written["StdDev"] / np.sqrt(written["NumRuns"]), rtol=1e-3)
    manifest = read_manifest(import_nsight_output(sorted(folder.glob("*.csv")), tmp_path, "c"))
    text = json.dumps(manifest, ensure_ascii=False)
    assert f"{processed.name}: CI95_Lower/CI95_Upper recomputed as a Student-t interval" in text
    assert "1.96·StdDev/√NumRuns" in text


def test_processed_file_alone_keeps_its_relative_std_dev_for_normalised_rows(tmp_path):
    """Case 04's processed_data alone: AvgValue is normalised (a ratio), StdDev is not, so the
    file's own RelativeStdDevPct (computed before normalising) is the one that holds: 5 of 6
    stable, not 'RSD nan' and 0 stable."""
    src = REPO / "tests" / "fixtures" / "import_cases" / "04-normalized" / \
        "processed_data-bench-0.csv"
    written = pd.read_csv(src)
    agg = read_table(import_nsight_output([src], tmp_path, "n"), C.TABLE_AGGREGATED)
    assert agg[C.RSD].to_numpy() == pytest.approx(written["RelativeStdDevPct"].to_numpy(),
                                                  rel=1e-12)
    assert agg[C.STABLE].tolist() == (written["RelativeStdDevPct"] < 2).tolist()
    assert int(agg[C.STABLE].sum()) == 5
    assert agg[[C.STD, C.CI95_LOWER, C.CI95_UPPER]].isna().all().all()  # of unnormalised values


def test_processed_file_alone_with_one_run_has_no_spread(tmp_path):
    src = REPO / "tests" / "fixtures" / "cases" / "runs1-processed-only" / \
        "processed_data-mm-0.csv"
    agg = read_table(import_nsight_output([src], tmp_path, "n"), C.TABLE_AGGREGATED)
    assert (agg[C.NUM_RUNS] == 1).all()
    assert agg[[C.STD, C.CI95_LOWER, C.CI95_UPPER, C.RSD]].isna().all().all()
    assert not agg[C.STABLE].any()
