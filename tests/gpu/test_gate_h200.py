"""The regression gate on real H200 pairs (``pytest -m gpu``, after scripts/gpu_check.sh recorded
record_h200.py's ``gate`` jobs into $KPROF_GPU_RESULTS): ``python -m profiling_worker compare``
as CI runs it, its exit code, Markdown and JUnit XML. Never run in CI."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from profiling_worker.bundle.gate.judge import GateOptions, Outcome, judge
from profiling_worker.bundle.gate.sides import GateSide

pytestmark = pytest.mark.gpu
RESULTS = Path(os.environ.get("KPROF_GPU_RESULTS", "/nonexistent"))


def _compare(base: str, cand: str, tmp_path: Path) -> tuple[int, str, ET.Element]:
    for job in (base, cand):
        if not (RESULTS / job / "manifest.json").is_file():
            pytest.skip(f"{job} was not recorded in this device call")
    junit = tmp_path / "gate.xml"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare",
                           str(RESULTS / base), str(RESULTS / cand), "--max-slowdown", "3%",
                           "--junit", str(junit), "--markdown", str(tmp_path / "gate.md")],
                          capture_output=True, text=True, timeout=120, check=False)
    print(proc.stdout, proc.stderr)
    return proc.returncode, proc.stdout, ET.parse(junit).getroot()


def _outcomes(base: str, cand: str) -> list[str]:
    result = judge(GateSide.load(RESULTS / base), GateSide.load(RESULTS / cand), GateOptions())
    return list(result.rows["Outcome"])


def test_same_job_twice_is_same(tmp_path: Path) -> None:
    rc, out, xml = _compare("h200-cupti-gate-base", "h200-cupti-gate-again", tmp_path)
    assert rc == 0, out
    assert set(_outcomes("h200-cupti-gate-base", "h200-cupti-gate-again")) == {
        Outcome.SAME.value}
    assert xml.get("tests") == "3" and xml.get("failures") == "0" and xml.get("errors") == "0"


def test_tf32_off_against_tf32_on_regressed_naming_region_and_config(tmp_path: Path) -> None:
    rc, out, xml = _compare("h200-cupti-gate-tf32", "h200-cupti-gate-fp32", tmp_path)
    assert rc == 1, out
    assert set(_outcomes("h200-cupti-gate-tf32", "h200-cupti-gate-fp32")) == {
        Outcome.REGRESSED.value}
    failed = [str(c.get("name")) for c in xml.iter("testcase") if c.find("failure") is not None]
    assert sorted(failed) == ["fp32 n=2048", "fp32 n=4096"], failed
    assert "| fp32 | n=4096 |" in out and "**regressed**" in out


def test_tf32_on_against_off_improved(tmp_path: Path) -> None:
    rc, out, _ = _compare("h200-cupti-gate-fp32", "h200-cupti-gate-tf32", tmp_path)
    assert rc == 0, out
    assert set(_outcomes("h200-cupti-gate-fp32", "h200-cupti-gate-tf32")) == {
        Outcome.IMPROVED.value}


def test_ncu_against_cupti_is_not_comparable(tmp_path: Path) -> None:
    rc, out, xml = _compare("h200-ncu-gate-base", "h200-cupti-gate-base", tmp_path)
    assert rc == 3, out
    assert set(_outcomes("h200-ncu-gate-base", "h200-cupti-gate-base")) == {
        Outcome.NOT_COMPARABLE.value}
    assert "backend: ncu vs cupti" in out
    assert xml.get("errors") == "3"  # exit 3: errors
