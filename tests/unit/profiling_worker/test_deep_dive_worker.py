"""Deep dive and rule digest, worker side (issue 13), on reports Nsight Compute wrote on the H200:
the import fixture made with the default section set (rules, 4 sections) and the J1 fp16 scenario
collected with --metrics only (no sections, no rules), and a --set detailed scenario whose
report was left out (its written deep dive holds the rules)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.backends.ncu_set import ncu_with_set
from profiling_worker.extract import rule_digest as RD
from profiling_worker.extract.deep_dive_file import written_deep_dive
from profiling_worker.extract.ncu_sections import deep_dive
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.schema.spec import SpecInvalid, validate_spec
from tests.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_SET = ROOT / "tests" / "fixtures" / "h200_import" / "ncu_plain" / "default_set.ncu-rep"
METRICS_ONLY = SCENARIOS / "h200-ncu-j1-fp16"  # its report is the one shared copy
RULES_JOB = SCENARIOS / "h200-ncu-matmul-rules"


def _bundle(tmp_path: Path) -> Path:
    (tmp_path / "nsight").mkdir()
    shutil.copy(DEFAULT_SET, tmp_path / "nsight" / DEFAULT_SET.name)
    return tmp_path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "profiling_worker", *args], capture_output=True,
                          text=True, timeout=120, check=False, env=os.environ.copy())


def test_section_set_is_an_ncu_option_that_keeps_old_hashes() -> None:
    base = {"kernels": ["matmul"], "configs": [{"n": 64}], "backend": "ncu"}
    assert validate_spec(base).spec_hash() == validate_spec({**base, "section_set": None}).spec_hash()
    deep = validate_spec({**base, "section_set": "full"})
    assert deep.section_set == "full" and deep.spec_hash() != validate_spec(base).spec_hash()
    for bad in ({**base, "section_set": "full; rm -rf"}, {**base, "backend": "cupti",
                                                          "section_set": "full"}):
        with pytest.raises(SpecInvalid) as err:
            validate_spec(bad)
        assert "section_set" in str(err.value)


def test_ncu_wrapper_adds_the_set_to_the_profiling_call_only(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ncu").write_text('#!/bin/sh\necho "$*"\n')
    (fake / "ncu").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    with ncu_with_set("full", tmp_path / "job") as command:
        assert command == f"{fake / 'ncu'} --set full"
        profile = subprocess.run("ncu --metrics a -f -o r.ncu-rep python x.py", shell=True,
                                 capture_output=True, text=True, check=True).stdout
        version = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout
    assert profile.split() == ["--set", "full", "--metrics", "a", "-f", "-o", "r.ncu-rep",
                               "python", "x.py"]
    assert version.split() == ["--version"]
    assert shutil.which("ncu") == str(fake / "ncu")  # PATH restored
    with ncu_with_set(None, tmp_path / "job") as command:
        assert command is None


def test_deep_dive_of_a_default_set_report_says_what_is_missing() -> None:
    data = deep_dive(DEFAULT_SET)
    assert len(data["launches"]) == 4
    assert all(s == ["LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution"]
               for s in data["sections_present"].values())
    metrics = pd.DataFrame(data["metrics"])
    names = set(metrics["metric"])
    assert {M.THEORETICAL_OCCUPANCY_PCT, M.WARPS_ACTIVE_PCT, M.GRID_SIZE} <= names
    # not collected by the default set: absent, never zero
    assert not any(n.startswith(M.STALL_PREFIX) for n in names)
    assert M.L2_HIT_PCT not in names and not data["hot_spots"]
    occupancy = metrics.pivot(index="launch_id", columns="metric", values="value")
    assert (occupancy[M.WARPS_ACTIVE_PCT] <= occupancy[M.THEORETICAL_OCCUPANCY_PCT]).all()
    assert {r["section"] for r in data["sections"]} == {"LaunchStats", "Occupancy",
                                                         "SpeedOfLight", "WorkloadDistribution"}


def test_rule_digest_weighs_each_rule_by_the_time_it_could_save() -> None:
    launches, rules = RD.launch_rules(DEFAULT_SET)
    assert len(launches) == 4 and not rules.empty
    table = RD.digest(launches, rules)
    saving = table[RD.SAVING]
    assert list(saving.dropna()) == sorted(saving.dropna(), reverse=True)
    total = launches["duration_ns"].sum()
    for _, row in table.iterrows():
        fired = rules[(rules["rule"] == row[RD.RULE])].merge(launches, on="launch_id")
        if fired["speedup"].notna().any():
            expected = 100 * (fired["duration_ns"] * fired["speedup"] / 100).sum() / total
            assert row[RD.NCU_SAVING] == pytest.approx(expected)
            assert row[RD.SAVING] <= row[RD.NCU_SAVING] + 1e-9
        else:  # a rule without an estimate is not drawn as a zero saving
            assert pd.isna(row[RD.SAVING]) and pd.isna(row[RD.NCU_SAVING])
    assert (table[RD.CONFIGS] == "-1").all()  # a report made elsewhere names no config


def test_rule_savings_are_capped_at_the_speed_of_light_roof() -> None:
    """Issue 37: TheoreticalOccupancy promised 81.25-87.5 % on cuBLAS matmuls already at 86-93 %
    of the SM's peak (h200-ncu-matmul-rules), an 'Est. saving 86.75 %' of the sweep no kernel
    could reach. Each launch's speedup is capped at 100 - its busiest SOL throughput; the tool's
    own figure stays, named as such."""
    launches, rules = RD.deep_dive_rules(written_deep_dive(RULES_JOB))
    assert launches["sol_pct"].notna().all()
    table = RD.digest(launches, rules).set_index(RD.RULE)
    occupancy = table.loc["TheoreticalOccupancy"]
    assert occupancy[RD.NCU_SAVING] == pytest.approx(86.75, abs=0.01)  # Nsight Compute's own
    headroom = launches["duration_ns"] * (100 - launches["sol_pct"]) / 100
    roof = 100 * headroom.sum() / launches["duration_ns"].sum()  # every launch at its roof
    assert occupancy[RD.SAVING] <= roof + 1e-9 and occupancy[RD.SAVING] < 15
    assert occupancy[RD.CAPPED] == "39 of 48 launches"
    estimated = table[table[RD.NCU_SAVING].notna()]
    assert (estimated[RD.SAVING] <= estimated[RD.NCU_SAVING] + 1e-9).all()
    assert list(table[RD.SAVING].dropna()) == sorted(table[RD.SAVING].dropna(), reverse=True)
    merged = rules.merge(launches, on="launch_id")
    capped = RD.capped_speedup(merged["speedup"], merged["sol_pct"])
    assert (capped.dropna() <= 100 - merged.loc[capped.notna(), "sol_pct"] + 1e-9).all()
    assert capped.isna().equals(merged["speedup"].isna())  # no estimate stays none


def test_rules_cli_on_an_imported_report_and_on_a_metrics_only_job(tmp_path: Path) -> None:
    out = _cli("rules", str(_bundle(tmp_path)))
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(io.StringIO(out.stdout))
    assert list(table.columns) == RD.DIGEST_COLUMNS and len(table) >= 3
    assert set(table[RD.CONFIGS]) == {"unknown"}
    sweep = _cli("rules", str(METRICS_ONLY))
    assert sweep.returncode == 0 and pd.read_csv(io.StringIO(sweep.stdout)).empty
    assert "--metrics only" in sweep.stderr
    assert _cli("rules", str(tmp_path / "none")).returncode == 1


def test_deepdive_cli_reads_the_report_when_the_bundle_has_no_tables(tmp_path: Path) -> None:
    out = _cli("deepdive", str(_bundle(tmp_path)))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["report"] == DEFAULT_SET.name and len(data["rules"]) == len(
        RD.launch_rules(DEFAULT_SET)[1])


def test_rules_cli_reads_the_written_deep_dive_when_the_report_was_left_out() -> None:
    """The bundled rules job (H200, device run 14, --set detailed) kept no .ncu-rep, only its
    nsight/deep_dive.json.gz: every launch's rules come from there, and agree with the report
    summary and the per-launch table the worker wrote from the report and its CSV."""
    summary = json.loads((RULES_JOB / C.REPORT_SUMMARY_FILE).read_text())
    assert not RD.bundle_reports(RULES_JOB)
    written = written_deep_dive(RULES_JOB)
    assert written is not None
    launches, rules = RD.deep_dive_rules(written)
    assert len(launches) == summary["launches"] and len(rules) == len(summary["rule_results"])
    assert (rules["rule"].value_counts().to_dict()
            == pd.Series([r["rule_identifier"] for r in summary["rule_results"]])
            .value_counts().to_dict())
    table = pd.read_parquet(RULES_JOB / "tables" / "launches.parquet")
    assert launches["duration_ns"].sum() == pytest.approx(
        table.loc[table["Metric"] == M.GPU_TIME, "Value"].sum())
    out = _cli("rules", str(RULES_JOB))
    assert out.returncode == 0, out.stderr
    digest = pd.read_csv(io.StringIO(out.stdout))
    assert list(digest.columns) == RD.DIGEST_COLUMNS and not digest.empty
    assert f"{len(launches)} launches, {len(rules)} rule results" in out.stderr
    assert C.DEEP_DIVE_FILE in out.stderr
    deep = _cli("deepdive", str(RULES_JOB))
    assert deep.returncode == 0 and json.loads(deep.stdout)["rules"] == written["rules"]
