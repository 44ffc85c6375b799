"""The Size sweep's frame and chart through the caches (:mod:`app.ui.cached`): the page's own
calls, and the same calls with every control at its default (:func:`compute_default`), which
``kernel-dashboard`` makes at server start for the jobs the first page most likely shows
(:mod:`app.ui.prewarm`; issue 37: a finished sweep's first chart), so that the page's first run
finds them instead of computing them (a 1,000-config sweep: 0.09-0.16 s of the thread's CPU time
in the first script run, 2-core machine beside a CPU hog, 2026-12-05).
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from profiling_worker.bundle.loader import Bundle

from app.core.figures.sweep import build_sweep_figure, wants_log_y
from app.core.views.sweep import (SweepOptions, chart_label, default_options, rate_units,
                                  sweep_frame)
from app.ui import cached


def frame(bundle: Bundle, options: SweepOptions) -> pd.DataFrame:
    """The sweep frame of ``bundle`` under ``options`` (a copy of the cached one).

    Raises:
        derived.MissingWork, ValueError: as :func:`app.core.views.sweep.sweep_frame`."""
    return cached.view(sweep_frame, bundle, options)


def figure(bundle: Bundle, options: SweepOptions, drawn: pd.DataFrame, log_y: bool) -> go.Figure:
    """The chart of ``drawn`` (:func:`frame` under ``options``), log y or not."""
    return cached.figure(build_sweep_figure, drawn, str(options.x), bundle.host_timer,
                         quantity_label=chart_label(bundle, options),
                         log_y=bool(log_y))  # numpy's bool is another cache key


def quantity_units(bundle: Bundle) -> dict[str, str]:
    """Each throughput quantity -> the unit the chart draws it in, so that a control's label
    names the unit the axis shows (a fresh user's find: "Analytic GB/s" over a MB/s axis):
    :func:`app.core.views.sweep.rate_units`, cached; neither throughput's frame is built (at
    1,000 configs they were most of a fresh load's work for two words)."""
    return cached.view(rate_units, bundle)


def compute_default(bundle: Bundle) -> None:
    """Compute the frame and chart the page opens with on ``bundle`` (every control at its
    default: :func:`app.core.views.sweep.default_options`, Log y as
    :func:`app.core.figures.sweep.wants_log_y` sets it) into the caches. A job the page cannot
    draw (no durations for the quantity, no values) is left to the page, which says why."""
    options = default_options(bundle)
    try:
        drawn = frame(bundle, options)
    except ValueError:  # derived.MissingWork too: the page shows its own message
        return
    if not drawn.empty:
        figure(bundle, options, drawn, wants_log_y(drawn))
        quantity_units(bundle)  # the Quantity control's labels
