"""The sidebar's "Run on" choice: this host's lanes, or a sweep on a Slurm cluster (or
submitit's local executor), with the cluster's options. :func:`submit` sends a validated spec
to the chosen executor.

The widgets sit outside the job form (a change reruns the app at once, like the kernel choice),
keys ``runon-<field>``.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from profiling_worker.bundle.schema.spec import JobSpec

from app.ui import jobs, panels, state

PAGE = "runon"
HOST, SLURM, LOCAL = "this host", "Slurm cluster", "array on this host (submitit, no Slurm)"
CHOICES = (HOST, SLURM, LOCAL)


def k(field: str) -> str:
    """Widget key of a Run-on field (``runon-<field>``)."""
    return state.key(PAGE, field)


def render_run_on_box() -> None:
    """The "Where to run" expander, its widgets drawn once the user has opened it in this
    session (:func:`app.ui.panels.fold`, kept drawn from then on; the radio was the only
    element of its kind on a first load). Until then :func:`chosen_options` gives this host,
    the radio's first choice."""
    if (box := panels.fold("Where to run", k("box"), keep=True)) is not None:
        with box:
            render_run_on()


def render_run_on() -> None:
    """Draw the choice; with a cluster, its options (partition, GPUs per task, time limit,
    tasks at once, retries, GPU types, configs per task, reference kernel)."""
    where = st.radio("Run on", CHOICES, key=k("where"), horizontal=False,
                     help="This host: one lane per GPU. Slurm: the configs become one job "
                          "array; the results folder must be shared with the nodes.")
    if where == HOST:
        return
    if where == SLURM and (missing := jobs.slurm_missing()):
        st.warning(f"{missing}: a sweep cannot be submitted from here. Run the dashboard on a "
                   "login node of the cluster (sbatch, squeue, scancel and SLURM_CONF), or "
                   "choose this host.", icon=":material/warning:")
    left, right = st.columns(2)
    left.text_input("Partition", key=k("partition"), placeholder="cluster default")
    right.text_input("GPU types (comma)", key=k("gpu_types"), placeholder="any",
                     help="One sweep per type, the same spec on each (--gres=gpu:<type>:N)")
    left.number_input("GPUs per task", 0, 16, 1, key=k("gpus_per_task"))
    right.number_input("Time limit (min)", 1, 7 * 24 * 60, 30, key=k("time_limit_min"))
    left.number_input("Tasks at once", 1, 10_000, 16, key=k("parallelism"))
    right.number_input("Retries", 0, 10, 1, key=k("retries"))
    left.number_input("Configs per task", 1, 4096, 1, key=k("configs_per_task"))
    right.checkbox("Reference kernel", True, key=k("reference"),
                   help="Each task first times a short kernel; a GPU slower than its peers "
                        "is flagged on every page")


def chosen_options() -> tuple[jobs.SweepOptions | None, list[str]]:
    """The sweep options and GPU types chosen, or (None, []) for this host.

    Raises:
        SpecInvalid: a bad option (named ``slurm.<field>``).
    """
    where = st.session_state.get(k("where"), HOST)
    if where == HOST:
        return None, []
    raw: dict[str, Any] = {"cluster": "slurm" if where == SLURM else "local",
                           "partition": str(st.session_state.get(k("partition")) or "").strip()}
    for name, default in (("gpus_per_task", 1), ("time_limit_min", 30), ("parallelism", 16),
                          ("retries", 1), ("configs_per_task", 1)):
        raw[name] = int(st.session_state.get(k(name), default))
    raw["reference"] = bool(st.session_state.get(k("reference"), True))
    types = [t.strip() for t in str(st.session_state.get(k("gpu_types")) or "").split(",")
             if t.strip()]
    return jobs.sweep_options(raw), types


def submit(spec: JobSpec) -> list[str]:
    """Queue ``spec`` where the sidebar says; returns the new job ids (several for a sweep
    repeated on each GPU type).

    Raises:
        SpecInvalid: a bad cluster option, GPU types asked for a cpu job, or Slurm missing.
        OSError: the job folder cannot be written.
    """
    options, types = chosen_options()
    return jobs.submit(spec, options, types)
