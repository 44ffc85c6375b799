"""The energy table beside time (Size sweep and Compare pages): J per run, J/TFLOP, J/GB and
TFLOP/s per W per region x config (:mod:`app.core.views.energy`), or why there is none where
the job asked for energy; nothing where it did not."""

from __future__ import annotations

import streamlit as st

from profiling_worker.bundle.loader import Bundle
from app.core.metrics import MissingData
from app.core.views.energy import asked, energy_frame, method_note
from app.ui import cached, panels, state


def show(bundle: Bundle, page: str, title: str = "Energy per kernel") -> None:
    """The table with its method, or one caption saying why there is none; nothing where the
    job neither asked for energy nor holds any (:func:`~app.core.views.energy.asked`)."""
    if not asked(bundle):
        return
    st.markdown(f"**{title}** (`{bundle.job_id}`)")
    try:
        frame = cached.view(energy_frame, bundle)
    except MissingData as exc:
        st.caption(str(exc))
        return
    panels.table(frame, key=state.key(page, f"energy-{bundle.job_id}"))
    st.caption(method_note(frame))
