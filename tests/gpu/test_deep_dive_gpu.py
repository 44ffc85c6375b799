"""Deep dive and rule digest on the H200 (issue 13; ``pytest -m gpu`` after scripts/gpu_check.sh
recorded ``h200-ncu-deepdive-fp16-4096`` and ``h200-ncu-matmul-rules``). Never run in CI."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.extract import rule_digest as RD
from profiling_worker.extract.deep_dive_file import written_deep_dive
from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.schema import metrics as M
from profiling_worker.bundle.schema.manifest import read_manifest

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))
DEEP = RESULTS / "h200-ncu-deepdive-fp16-4096"
SWEEP = RESULTS / "h200-ncu-matmul-rules"


def _need(bundle: Path) -> None:
    if not (bundle / C.MANIFEST_FILE).exists():
        pytest.skip(f"{bundle.name} was not recorded in this call")


def _cli(command: str, bundle: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "profiling_worker", command, str(bundle)],
                          capture_output=True, text=True, timeout=300, check=False)


def test_deep_dive_holds_the_full_sections() -> None:
    _need(DEEP)
    manifest = read_manifest(DEEP)
    print(manifest["status"], manifest.get("backend"))
    assert manifest["status"] == "done", manifest.get("error")
    data = written_deep_dive(DEEP)  # as recorded, or gzipped as scripts/bundle_recorded.py keeps it
    assert data is not None, f"{DEEP.name} wrote no deep dive"
    print("problems:", data["problems"])
    assert not [p for p in data["problems"] if "hot_spots" not in p and "markers" not in p]
    launches = pd.DataFrame(data["launches"])
    print(launches[["annotation", "config", "run", "kernel"]].to_string())
    assert set(launches["annotation"]) == {"fp16"} and set(launches["config"]) == {0}
    assert set(launches["run"]) == {0, 1, 2}
    present = set().union(*map(set, data["sections_present"].values()))
    print(sorted(present))
    assert {"SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
            "MemoryWorkloadAnalysis"} <= present
    metrics = pd.DataFrame(data["metrics"])
    per_metric = metrics.groupby("metric")["value"].median()
    print(per_metric.to_string())
    for name in (M.L1_BYTES, M.L2_BYTES, M.DRAM_READ):  # nonzero bytes at every level
        assert per_metric.get(name, 0) > 0, name
    theoretical = per_metric[M.THEORETICAL_OCCUPANCY_PCT]
    assert 0 < per_metric[M.WARPS_ACTIVE_PCT] <= theoretical * 1.05 <= 105
    sections = pd.DataFrame(data["sections"])
    print(sections[sections["section"] == "WarpStateStats"][["metric", "label", "value"]]
          .drop_duplicates("metric").to_string())
    stalls = per_metric[[m for m in per_metric.index if m.startswith(M.STALL_PREFIX)]]
    assert len(stalls) >= 5 and (stalls > 0).any(), stalls
    rules = pd.DataFrame(data["rules"])
    print(rules[["rule", "title", "speedup"]].drop_duplicates().to_string())
    assert not rules.empty
    print("hot spots:", len(data["hot_spots"]), data["hot_spots"][:3])
    print("markers:", len(data["markers"]))


def test_deep_dive_cli_gives_the_bundle_tables() -> None:
    _need(DEEP)
    out = _cli("deepdive", DEEP)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["launches"], out.stdout[:200]


def test_rule_digest_of_the_sweep() -> None:
    _need(SWEEP)
    out = _cli("rules", SWEEP)
    print(out.stderr)
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(io.StringIO(out.stdout))
    print(table.drop(columns=[RD.MESSAGE, RD.KERNELS]).head(12).to_string())
    assert not table.empty
    saving = table[RD.SAVING].dropna()
    assert ((saving >= 0) & (saving <= 100)).all()
    assert list(saving) == sorted(saving, reverse=True)
    configs = ", ".join(table[RD.CONFIGS])
    assert all(f"n={n}" in configs for n in (512, 8192)), configs


def test_pm_sampling_of_a_fresh_deep_dive() -> None:
    """Issue 28: a deep dive recorded now writes every launch's PM-sampling series into its
    deep dive (placed on the kernel's own clock), and the pmsampling command prints them."""
    _need(DEEP)
    data = written_deep_dive(DEEP)
    assert data is not None
    if "pm_sampling" not in data:
        pytest.skip(f"{DEEP.name} was seeded from a recording made before issue 28")
    series = pd.DataFrame(data["pm_sampling"])
    print(series[["launch_id", "metric", "unit", "origin", "duration_ns", "dropped"]]
          .drop_duplicates("metric").to_string())
    assert set(series["launch_id"]) == {launch["launch_id"] for launch in data["launches"]}
    assert set(series["origin"]) == {"kernel start"}
    tensor = series[series["metric"].str.startswith("sm__pipe_tensor_cycles_active")]
    assert len(tensor) and all(max(v) > 50 for v in tensor["values"])  # an fp16 matmul
    out = _cli("pmsampling", DEEP)
    assert out.returncode == 0, out.stderr
    assert len(json.loads(out.stdout)["pm_sampling"]) == len(series)
