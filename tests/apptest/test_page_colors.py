"""One colour per annotation of a job across the views (sweep, stability, roofline, cache and
clock, kernel clocks), on the bundled H200 jobs."""

from __future__ import annotations

from apptest_helpers import plotly_specs
from tests.scenarios import SCENARIOS

JOB_PAGES = {"h200-ncu-roofline": ("sweep", "stability", "bound_roofline", "clocks_thermal"),
             "h200-ncu-elementwise": ("sweep", "stability", "cache_clock", "memory")}


def _annotation_colors(spec: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for trace in spec["data"]:
        name = (trace.get("meta") or {}).get("annotation")
        if name is None:
            continue
        color = (trace.get("line") or {}).get("color") or (trace.get("marker") or {}).get("color")
        out.setdefault(name, set()).add(color)
    return out


def test_an_annotation_keeps_its_colour_on_every_view(store, monkeypatch, app) -> None:
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    for job, pages in JOB_PAGES.items():
        seen: dict[str, set[str]] = {}
        views = 0
        for page in pages:
            at = app(page, query={"job": job})
            assert not at.exception, (job, page, at.exception)
            for spec in plotly_specs(at):
                colors = _annotation_colors(spec)
                views += bool(colors)
                for name, found in colors.items():
                    seen.setdefault(name, set()).update(found)
        assert views >= 3, f"{job}: too few views with annotation traces to compare"
        assert seen and all(len(c) == 1 for c in seen.values()), (job, seen)
        assert len({next(iter(c)) for c in seen.values()}) == len(seen)  # distinct per annotation
