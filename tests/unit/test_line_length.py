"""Lines of app/ and profiling_worker/ are at most 100 characters (the project's standard; no
formatter or linter runs in the tests, so this guard holds it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 100


def test_no_line_of_the_packages_is_over_100_characters() -> None:
    long = [f"{path.relative_to(ROOT)}:{number} ({len(line)} characters)"
            for package in ("app", "profiling_worker")
            for path in sorted((ROOT / package).rglob("*.py"))
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > LIMIT]
    assert not long, "wrap these lines:\n" + "\n".join(long)
