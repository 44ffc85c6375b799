"""The gate's JUnit file (``python -m profiling_worker compare --junit``) as CI systems read it,
for every exit code, on recorded H200 scenarios: Jenkins' schema and two readers from PyPI."""

from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

import pytest

from profiling_worker.bundle.gate import exit_codes
from tests.scenarios import SCENARIOS

SCHEMA = Path(__file__).resolve().parents[2] / "fixtures" / "junit" / "junit-10.xsd"
BASE, AGAIN = SCENARIOS / "h200-cupti-gate-base", SCENARIOS / "h200-cupti-gate-again"
#: exit code -> (baseline, candidate, extra arguments), one pair per code the gate has
PAIRS = {
    "passed": (exit_codes.EXIT_OK, BASE, AGAIN, ()),
    "regressed": (exit_codes.EXIT_REGRESSED, SCENARIOS / "h200-cupti-gate-tf32",
                  SCENARIOS / "h200-cupti-gate-fp32", ()),
    "not comparable": (exit_codes.EXIT_NOT_JUDGED, SCENARIOS / "h200-ncu-gate-base", BASE, ()),
    "ambiguous": (exit_codes.EXIT_UNDECIDED, BASE, AGAIN, ("--max-slowdown", "0.47%")),
    "unreadable bundle": (exit_codes.EXIT_BAD_INPUT, BASE, Path("no-such-bundle"), ()),
    "bare fraction": (exit_codes.EXIT_BAD_INPUT, BASE, AGAIN, ("--max-slowdown", "0.03")),
}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, Path]]:
    """Per pair: the CLI's exit code and the JUnit file it wrote."""
    out = {}
    for name, (_code, base, cand, extra) in PAIRS.items():
        junit = tmp_path_factory.mktemp("junit") / "gate.xml"
        proc = subprocess.run([sys.executable, "-m", "profiling_worker", "compare", str(base),
                               str(cand), "--junit", str(junit), *extra],
                              capture_output=True, text=True, timeout=120, check=False)
        out[name] = (proc.returncode, junit)
    return out


@pytest.mark.parametrize("name", PAIRS)
def test_every_exit_code_writes_a_file_valid_under_jenkins_schema(
        name: str, written: dict[str, tuple[int, Path]]) -> None:
    """Consumer: Jenkins' junit-10.xsd (xunit-plugin; tests/fixtures/junit), validated with
    xmlschema (PyPI). A failing exit has a failure or error in the file; a passing one none."""
    xmlschema = pytest.importorskip("xmlschema")
    code, path = written[name]
    assert code == PAIRS[name][0]
    assert path.is_file(), f"exit {code} wrote no JUnit file"
    xmlschema.XMLSchema(str(SCHEMA)).validate(str(path))  # raises naming what is invalid
    suite = xmlschema.XMLSchema(str(SCHEMA)).to_dict(str(path))
    bad = int(suite["@failures"]) + int(suite["@errors"])
    assert (bad > 0) == (code != exit_codes.EXIT_OK), (code, suite["@failures"], suite["@errors"])


@pytest.mark.parametrize("name", PAIRS)
def test_junitparser_reads_the_reason_and_figures_in_the_body(
        name: str, written: dict[str, tuple[int, Path]]) -> None:
    """Consumer: junitparser (PyPI). Each failure or error holds its reason as its text as well
    as its message; the suite's counts agree with its cases; regressions are failures (exit 1),
    rows the gate could not decide are errors (exit 3 and 4), a bad input one error (exit 2)."""
    junitparser = pytest.importorskip("junitparser")
    code, path = written[name]
    suite = next(iter(junitparser.JUnitXml.fromfile(str(path))))
    results = [r for case in suite for r in case.result]
    kinds = {type(r).__name__ for r in results}
    assert (suite.failures, suite.errors, suite.skipped) == (
        sum(isinstance(r, junitparser.Failure) for r in results),
        sum(isinstance(r, junitparser.Error) for r in results), 0)
    expected = {exit_codes.EXIT_OK: set(), exit_codes.EXIT_REGRESSED: {"Failure"}}
    assert kinds == expected.get(code, {"Error"}), kinds
    for r in results:
        assert r.text and r.text.startswith(r.message), (r.message, r.text)
        if code != exit_codes.EXIT_BAD_INPUT:  # a judged row: its figures too
            assert "95 % CI" in r.text and "baseline " in r.text and "candidate " in r.text
    if name == "bare fraction":
        assert "0.03" in results[0].message and "bare number" in results[0].text


@pytest.mark.parametrize("name", PAIRS)
def test_junit2html_shows_each_failure_with_its_reason(
        name: str, written: dict[str, tuple[int, Path]]) -> None:
    """Consumer: junit2html (PyPI, junit2htmlreport). It shows a failure's or error's text (an
    empty one as 'failed'); every case that did not pass is shown with its reason."""
    parser = pytest.importorskip("junit2htmlreport.parser")
    code, path = written[name]
    report = parser.Junit(filename=str(path))
    failed = [case for suite in report.suites for case in suite.failed()]
    assert (len(failed) > 0) == (code != exit_codes.EXIT_OK)
    for case in failed:
        assert case.failure not in (None, "failed", "error") and case.failure_msg
        assert case.failure.startswith(case.failure_msg)
    page = report.html()
    assert all(case.failure in html.unescape(page) for case in failed)
