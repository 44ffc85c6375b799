"""Deep-dive view tables on the H200 full-set deep dive (device run 14, tests/fixtures/bundles)."""

from __future__ import annotations

from app.core.views import deep_dive as D
from profiling_worker.extract.deep_dive_file import written_deep_dive
from tests.scenarios import SCENARIOS

BUNDLE = SCENARIOS / "h200-ncu-deepdive-fp16-4096"


def test_hot_spots_and_markers_give_addresses_in_hex_like_the_sass() -> None:
    """Decimal program counters (139,796,814,642,352) could not be matched by eye with the
    SASS's hex branch targets or the rule markers (new-user trial)."""
    data = written_deep_dive(BUNDLE)
    assert data is not None
    spots, markers = D.table(data, "hot_spots", 0).frame, D.table(data, "markers", 0).frame
    raw = {r["address"] for r in data["hot_spots"] if r["launch_id"] == 0}
    assert {int(a, 16) for a in spots["address"]} == raw
    assert set(markers["address"]) <= set(spots["address"])  # each marked line is a hot spot
    assert "file" not in spots and "line" not in spots  # the report has no line info (-lineinfo)
