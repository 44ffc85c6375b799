"""A count of one is said in the singular: "Pre-flight 1 configs" (a fresh user's find). Counts in
the app's and the worker's messages go through one helper, number_text.counted."""

from __future__ import annotations

import re
from pathlib import Path

from profiling_worker.bundle.number_text import counted
from profiling_worker.bundle.schema.run_audit import ConfigAudit

ROOT = Path(__file__).resolve().parents[3]


def test_counted_says_one_in_the_singular() -> None:
    assert counted(1, "config") == "1 config" and counted(2, "config") == "2 configs"
    assert counted(1, "launch", "launches") == "1 launch"
    assert counted(1_969, "launch", "launches") == "1,969 launches"


def test_a_config_of_one_run_says_run() -> None:
    assert ConfigAudit(runs=1, passed=1).badge() == "1 of 1 run passed"
    assert ConfigAudit(runs=3, passed=3).badge() == "3 of 3 runs passed"


#: "{count} nouns" written by hand in an f-string: the count's own expression names a count
#: (len(...), a runs/total/launches variable); constants (ALL_CAPS: at least 2) and the few
#: counts that cannot be 1 are listed below.
_HAND_PLURAL = re.compile(
    r"\{(len\([^{}]*\)|[\w.\[\]']*(count|total|done|runs|launches|untimed|dropped|outside|have|"
    r"expected|asked|met|capped|few|n)\b[^{}]*)\}\*{0,2} (runs|configs|kernels|launches|rows|files|"
    r"jobs|metrics|points|samples|calls|tasks|tags|verdicts|rule results|reports)\b")
#: Where a count of 1 cannot occur: above a limit, or a table cut to fewer rows than it holds.
_CANNOT_BE_ONE = ("{len(shown):,} of the {len(frame):,} rows", "(all {len(frame):,} rows)",
                  "{count:,} configs is more than", "{len(value):,} configs is more than",
                  "{n} tags (at most", "{audited_runs(bundle):,} runs are more",
                  "(first {len(shown):,} of {len(frame):,} rows", "({len(times)} runs)",
                  "{len(sets[0])} vs {len(sets[1])} metrics", "{int(runs)} runs a side")


def test_no_count_is_pluralised_by_hand() -> None:
    found = []
    for path in [*ROOT.joinpath("app").rglob("*.py"), *ROOT.joinpath("profiling_worker").rglob("*.py")]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("#") or any(ok in line for ok in _CANNOT_BE_ONE):
                continue
            if _HAND_PLURAL.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "say these counts with number_text.counted:\n" + "\n".join(found)
