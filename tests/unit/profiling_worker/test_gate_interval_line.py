"""The regression gate names its interval's method and coverage beside it in every output:
the CLI's text and ``--markdown`` (a line under the table) and ``--junit`` (the suite's
``interval`` property), on recorded H200 bundles."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from profiling_worker.bundle.schema import interval_words as W
from tests.scenarios import SCENARIOS

BASE, AGAIN = SCENARIOS / "h200-cupti-gate-base", SCENARIOS / "h200-cupti-gate-again"


def test_cli_markdown_and_junit_name_fieller_and_its_coverage(tmp_path: Path) -> None:
    md, junit = tmp_path / "gate.md", tmp_path / "gate.xml"
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(BASE),
                           str(AGAIN), "--markdown", str(md), "--junit", str(junit)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = W.line(W.RATIO)
    assert "Fieller" in said and "H200 GPU timings at" in said
    for text in (proc.stdout, md.read_text(encoding="utf-8")):
        table_end = text.rindex("|\n")  # the line comes under the table, after a blank line
        assert text[table_end:] == f"|\n\n{said}\n"
    suite = ET.parse(junit).getroot()
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"interval": said}
    assert list(suite)[0].tag == "properties"  # before the cases, as junit-10.xsd reads it


def test_the_cli_help_names_fieller_not_welch() -> None:
    proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    flat = " ".join(proc.stdout.split())
    assert "Fieller's interval of the ratio of means, minus 1" in flat
    assert "(Welch)" not in flat
