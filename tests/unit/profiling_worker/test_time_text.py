"""A recorded time as a person reads it (issue 37: cancel notes showed ISO 8601 text such as
"2026-12-07T09:12:33.123456+00:00")."""

from __future__ import annotations

import pytest

from profiling_worker.bundle.number_text import times_in, when_text
from profiling_worker.bundle.schema import partial


@pytest.mark.parametrize("stamp", ["2026-12-07T09:12:33.123456+00:00",
                                   "2026-12-07T09:12:33+00:00", "2026-12-07T09:12:33Z",
                                   "2026-12-07T10:12:33+01:00", "2026-12-07T09:12:33"])
def test_a_recorded_time_reads_in_utc_to_the_second(stamp: str) -> None:
    assert when_text(stamp) == "2026-12-07 09:12:33 UTC"
    assert when_text(stamp, date=False) == "09:12:33 UTC"


def test_what_is_no_time_is_left_as_it_was() -> None:
    assert when_text("not a time") == "not a time"
    assert when_text(None) == "" and when_text("") == ""


def test_each_time_in_a_note_is_rewritten_and_nothing_else() -> None:
    how = "SIGTERM at 2026-12-07T09:12:33.123456+00:00: the server stopped (port 8501)"
    assert times_in(how) == "SIGTERM at 2026-12-07 09:12:33 UTC: the server stopped (port 8501)"
    assert times_in("n=2026, no time here") == "n=2026, no time here"


def test_the_late_cancel_note_shows_no_iso_time() -> None:
    note = partial.late_cancel_note("SIGTERM at 2026-12-07T09:12:33.123456+00:00", done=True)
    assert "T09:12" not in note and when_text("2026-12-07T09:12:33+00:00") in note


def test_the_share_reports_provenance_says_its_times_as_a_person_reads_them() -> None:
    """The HTML report's provenance wrote the manifest's ISO 8601 times as they are."""
    from app.core.share.job import provenance
    from profiling_worker.bundle.loader import load_bundle
    from tests.scenarios import SCENARIOS

    bundle = load_bundle(SCENARIOS / "h200-cupti-gate-base")
    keys = [k for k in ("created_at", "started_at", "finished_at") if bundle.manifest.get(k)]
    assert keys, "the bundled job records when it ran"
    stamps = [bundle.manifest[k] for k in keys]
    said = next(p for p in provenance(bundle).parts  # the times' line
                if p.startswith("<p") and keys[0].replace("_", " ") in p)
    for stamp in stamps:  # (the manifest's JSON, shown below it as data, keeps ISO 8601)
        assert when_text(stamp) in said and str(stamp) not in said, said
