"""Cache x clock matrix on the H200 bundles: siblings found by spec, L2 marked, time and the SM
clock each kernel ran at per variant."""

import math

import pytest

from app.core.figures.cache_clock import build_cache_clock_figure
from app.core.views.cache_clock import cache_clock_frame, l2_bytes, siblings, variant_label
from tests.scenarios import scenario, scenario_names


@pytest.fixture(scope="module")
def bundles():
    return [scenario(name) for name in scenario_names()]


def test_cache_all_and_none_are_siblings(bundles):
    cold = next(b for b in bundles if b.job_id == "h200-ncu-elementwise")
    group = siblings(cold, bundles)
    assert [b.job_id for b in group] == ["h200-ncu-elementwise", "h200-ncu-elementwise-cache-none"]
    assert [variant_label(b) for b in group] == ["cache all · clock none", "cache none · clock none"]


def test_frame_has_both_variants_the_clock_and_the_l2(bundles):
    cold = next(b for b in bundles if b.job_id == "h200-ncu-elementwise")
    frame = cache_clock_frame(siblings(cold, bundles))
    assert set(frame["Variant"]) == {"cache all · clock none", "cache none · clock none"}
    scale = frame[(frame["Annotation"] == "x*2") & (frame["n"] == 1 << 26)]
    assert scale["WorkingSetBytes"].tolist() == [2 * 4 * (1 << 26)] * 2
    # 512 MiB working set, far beyond the 60 MiB L2: cache control cannot matter (within 5%)
    assert abs(scale["TimeVsFirst"].iloc[1] - 1) < 0.05
    assert frame["SmClockMHz"].between(300, 1980 * 1.02).all()
    assert (frame["GBpsSource"] == "measured DRAM bytes").all()
    size, source = l2_bytes(cold)
    assert size == 62_914_560 and source == "device attribute (Nsight Compute)"
    fig = build_cache_clock_figure(frame, size, source)
    assert fig.layout.xaxis3.type == "log"
    # on a log axis the label sits at log10 of the bytes, i.e. on the line, inside the plot
    (label,) = [a for a in fig.layout.annotations if a.text.startswith("L2")]
    assert "L2 60 MiB" in label.text  # the panels' titles are annotations too
    assert label.x == pytest.approx(math.log10(fig.layout.shapes[0].x0))


def test_a_job_without_variants_stands_alone(bundles):
    roof = next(b for b in bundles if b.job_id == "h200-ncu-roofline")
    assert [b.job_id for b in siblings(roof, bundles)] == ["h200-ncu-roofline"]


def test_a_job_without_the_sm_clock_draws_no_clock_panel(bundles):
    """A fresh user's find: on h200-cupti-stability (CUPTI records no SM clock) the third
    panel was an empty axis from -1 to 4 MHz. Only panels with values are drawn."""
    cupti = next(b for b in bundles if b.job_id == "h200-cupti-stability")
    frame = cache_clock_frame(siblings(cupti, bundles))
    assert frame["SmClockMHz"].isna().all() and frame["TimeNs"].notna().all()
    fig = build_cache_clock_figure(frame, None, "")
    titles = [a.text for a in fig.layout.annotations]
    assert "SM clock the kernel ran at" not in titles and "Kernel time" in titles
    assert "xaxis3" not in fig.layout.to_plotly_json()
    assert all(len(t.y) and not all(math.isnan(v) for v in t.y) for t in fig.data)
    assert fig.layout.xaxis2.title.text.startswith("Working set")


def test_bandwidth_below_one_gb_per_s_is_drawn_in_mb_per_s(bundles):
    """A fresh user's find: a cpu job's bandwidth panel read 0.1 to 0.45 GB/s."""
    cupti = next(b for b in bundles if b.job_id == "h200-cupti-stability")
    frame = cache_clock_frame(siblings(cupti, bundles))
    slow = frame.assign(GBps=frame["GBps"] / 5000)  # the same rows at a host's bandwidth
    fig = build_cache_clock_figure(slow, None, "", host_timer=True)
    assert fig.layout.yaxis2.title.text == "Bandwidth (MB/s)"
    shown = sorted(v for t in fig.data if t.yaxis == "y2" for v in t.y)
    assert shown[len(shown) // 2] >= 1
    assert shown == pytest.approx(sorted(slow["GBps"] * 1000))
    assert build_cache_clock_figure(frame, None, "").layout.yaxis2.title.text == \
        "Bandwidth (GB/s)"
