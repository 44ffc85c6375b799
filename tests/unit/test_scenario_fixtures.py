"""Tests read their own frozen scenarios (tests/fixtures/bundles), never the demo data the app
ships: re-recording a demo must not change a test result (issue 27). Only the demo's own tests
(``tests.scenarios.DEMO_TESTS``) name that directory; the scenarios stay small (the whole tree
travels to the GPU machine under a 64 MiB limit) and each one is described in the README."""

from __future__ import annotations

import re
from pathlib import Path

from tests.scenarios import DEMO_TESTS, REPO, SCENARIOS, scenario_names

#: ``app/bundled`` as a path string or as pathlib parts (not ``tests/unit/app/bundled.py``).
DEMO_DIR = re.compile(r'(?<![\w/.])app/bundled\b|"app"\s*/\s*"bundled"')
#: The scenario folders built by hand as pathlib parts, around the accessor.
OWN_PATH = re.compile(r'/\s*"bundles"')
ALLOWED = {*DEMO_TESTS, "tests/scenarios.py", "tests/unit/test_scenario_fixtures.py"}
#: All scenario files together (3.6 MB at issue 27); a new scenario copies only what tests read.
MAX_SCENARIO_BYTES = 4_500_000


def _matching(pattern: re.Pattern[str]) -> list[str]:
    files = sorted((REPO / "tests").rglob("*.py"))
    return [rel for rel in (p.relative_to(REPO).as_posix() for p in files)
            if rel not in ALLOWED and pattern.search((REPO / rel).read_text(encoding="utf-8"))]


def test_only_the_demo_tests_name_the_demo_bundles() -> None:
    assert _matching(DEMO_DIR) == [], ("read tests/fixtures/bundles/<scenario> through "
                                       "tests/scenarios.py; only the demo's own tests read the demo")


def test_scenarios_are_reached_through_the_accessor_only() -> None:
    assert _matching(OWN_PATH) == [], "use tests.scenarios (scenario_dir, scenario_report, ...)"


def test_the_pattern_finds_both_spellings_and_not_the_helper_module() -> None:
    assert DEMO_DIR.search('BUNDLED = REPO / "app" / "bundled"')
    assert DEMO_DIR.search("copied from app/bundled/h200-ncu-softmax")
    assert not DEMO_DIR.search("from tests.unit.app.bundled import extra; tests/unit/app/bundled.py")
    assert OWN_PATH.search('REPO / "tests" / "fixtures" / "bundles" / FULL')


def test_every_scenario_is_in_the_readme_and_every_readme_row_is_a_scenario() -> None:
    readme = (SCENARIOS / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w.-]+)` \|", readme, flags=re.M))
    assert rows == set(scenario_names())


def test_scenarios_stay_small_and_keep_a_report_only_where_the_readme_says() -> None:
    files = [p for p in SCENARIOS.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < MAX_SCENARIO_BYTES
    readme = (SCENARIOS / "README.md").read_text(encoding="utf-8")
    for report in (p for p in files if ".ncu-rep" in p.name):
        job = report.relative_to(SCENARIOS).parts[0]
        (row,) = [line for line in readme.splitlines() if line.startswith(f"| `{job}` |")]
        assert report.name in row, f"{job} keeps {report.name}: say in its README row which test opens it"
