"""A job that ended before it measured every config, and kept what it had measured.

A cancel (SIGTERM: the app's Cancel, ``cancel_job``, Slurm's cancel; SIGINT: Ctrl-C) or a kernel
that raised at some configs used to lose every run measured. The backends that time regions
themselves (cpu, events: :func:`~profiling_worker.backends.region_timer.time_regions`) read a
config's marks only after its last run, so they keep **whole configs**: a config cut mid-way by a
cancel leaves no rows (its runs are dropped and it is listed as not measured, ``cut``), and a
config whose kernel raised is skipped while the others run on. The job still ends ``cancelled``
or ``failed`` (its spec was not done), but its result tables hold the configs measured and its
manifest says so:

- ``partial``: the reasons, one sentence each (the key an import sets for a bundle that holds
  part of its files; the gate never judges such a bundle, ``gate/context.py``);
- ``partial_configs``: ``{"measured": [config index...], "not_measured": [{"config", "label",
  "why"}...], "total": n, "cancelled": "<signal> at <ISO time>" | None}``.

:func:`note` is the one sentence every page, the HTML report and the agent door show over it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from profiling_worker.bundle.number_text import counted, times_in
from profiling_worker.bundle.schema.manifest import now_iso

#: Manifest key of the reasons (a list of sentences); an import sets it too.
PARTIAL_KEY = "partial"
#: Manifest key of which configs were measured and why the others were not.
CONFIGS_KEY = "partial_configs"
#: Manifest key of a cancel that came once the worker had stopped measuring (every run
#: measured, or the configs kept): how it came (``"SIGTERM at <ISO time>"``). The worker wrote
#: the bundle whole; a job whose every run was measured ends ``done``.
LATE_CANCEL_KEY = "cancel_after_measuring"


#: A job folder's file naming why its worker is sent a cancel signal, written by the sender
#: just before it (every cancel of the dashboard: its job panel, the agent door, kernel-sweep's
#: Ctrl-C, the server that stops); the worker adds it to how the cancel came. A signal sent
#: without it (Ctrl-C in a worker's own terminal, Slurm's own cancel) says only the signal.
CANCEL_REASON_FILE = "cancel_reason.txt"
#: The reasons the dashboard's cancels leave (:func:`write_cancel_reason`), each the end of the
#: job's recorded cancel: ``"SIGTERM at <ISO time>: cancelled by the user in the job panel"``.
USER_CANCEL = "cancelled by the user in the job panel"
DOOR_CANCEL = "cancelled by the agent door's cancel_job"
SWEEP_CLI_CANCEL = "cancelled by Ctrl-C in kernel-sweep"
SERVER_STOPPED = "the dashboard server stopped"
#: How a cancel of a job still queued came (no worker to signal): its :func:`cancel_how`'s
#: first words, where a running job's name the signal.
IN_QUEUE = "while queued"
#: How a cancel of a job whose worker was still starting came (no worker to signal yet).
STARTING = "while starting"


def write_cancel_reason(job_dir: Path, reason: str) -> None:
    """Leave ``reason`` ("the dashboard server stopped") for the worker of ``job_dir`` before
    signalling it; not written (a full or read-only disk) is no reason not to cancel."""
    try:
        (job_dir / CANCEL_REASON_FILE).write_text(reason + "\n", encoding="utf-8")
    except OSError:
        pass


def cancel_reason(job_dir: Path) -> str:
    """The reason :func:`write_cancel_reason` left, "" when none (a signal from outside the
    dashboard: Ctrl-C, Slurm): read in the worker's signal handler, so its first 200
    characters only."""
    try:
        with open(job_dir / CANCEL_REASON_FILE, encoding="utf-8") as fh:
            return fh.read(200).strip()
    except (OSError, ValueError):
        return ""


def cancel_how(what: str, job_dir: Path) -> str:
    """How a cancel came, as the job records it, from the reason :func:`write_cancel_reason`
    left in ``job_dir``: ``"SIGTERM at <ISO time>: cancelled by the user in the job panel"``
    (``what``: the signal's name, or :data:`IN_QUEUE` for a job whose worker never started);
    without the reason when none was left (a signal from outside the dashboard)."""
    reason = cancel_reason(job_dir)
    return f"{what} at {now_iso()}" + (f": {reason}" if reason else "")


#: How a cancelled job's error message begins, ``how`` the cancel came following it.
CANCELLED_HEAD = "the job was cancelled ("


def cancelled_message(how: str) -> str:
    """A cancelled job's error message of :func:`cancel_how`'s ``how``, its time as a person
    reads it: ``the job was cancelled (SIGTERM at 2026-12-07 09:12:33 UTC: ...)``."""
    return f"{CANCELLED_HEAD}{times_in(how)})"


def recorded_cancel(manifest: Mapping[str, Any]) -> str:
    """How a cancelled job's cancel came, as its manifest records it (:func:`cancel_how`:
    ``"SIGINT at <time>: <reason>"``, the configs kept's record first, else its error's
    message), "" where it records none. The error's ``how`` is read as data; its message is
    parsed only for bundles recorded before the error carried it."""
    record = manifest.get(CONFIGS_KEY)
    if isinstance(record, Mapping) and record.get("cancelled"):
        return str(record["cancelled"])
    error = manifest.get("error")
    if isinstance(error, Mapping) and error.get("how"):
        return str(error["how"])
    message = str(error.get("message") or "") if isinstance(error, Mapping) else ""
    return message[len(CANCELLED_HEAD):].removesuffix(")") \
        if message.startswith(CANCELLED_HEAD) else ""


def cancel_said(manifest: Mapping[str, Any]) -> str:
    """How a cancelled job's cancel came, as every view of it says it (the job panel's card, a
    page's banner, History; the report and the agent door give its error's message):
    :func:`recorded_cancel`, its time as a person reads it, ``"while queued at 09:12:33 UTC:
    cancelled by the user in the job panel"``; "" where the manifest records none."""
    how = recorded_cancel(manifest)
    return times_in(how) if how else ""


def cancel_signal(how: str) -> str:
    """The signal a recorded cancel names (``"SIGINT"`` of ``"SIGINT at ..."``), "" where it
    names none (a job cancelled while queued, an old record)."""
    first = how.split(" ", 1)[0]
    return first if first.startswith("SIG") else ""


@dataclass
class Shortfall:
    """What a backend measured of a job it could not finish.

    Attributes:
        measured: indices of the configs whose rows were kept.
        failed: config index -> the error its kernel raised (the config was skipped).
        cancelled: how the cancel came (``"SIGTERM at 2026-12-07T02:10:00+00:00"``), None when
            the job was not cancelled.
        cut: the config that was running when the cancel came (its runs dropped), else None.
        lost: what else was lost, in words (a backend that cannot keep whole configs says what
            it dropped), "" when nothing.
        kind, hint: the ``failed`` error's kind and fix where the backend passes them on (a
            later Nsight Compute call that failed: its kernel's error's, or ncu's
            ``profiling_failed``), else "" (the runner's kernel_failed and its fix).
        dropped: configs that ran all their runs in a call that failed, dropped with it (a
            call is kept whole or not at all; ``lost`` says which call).
    """

    measured: list[int]
    failed: dict[int, str] = field(default_factory=dict)
    cancelled: str | None = None
    cut: int | None = None
    lost: str = ""
    kind: str = ""
    hint: str = ""
    dropped: list[int] = field(default_factory=list)


def config_label(config: Mapping[str, Any]) -> str:
    """``n=4096, dtype=fp16``: a config's parameters, as the pages label it."""
    return ", ".join(f"{k}={v}" for k, v in config.items())


def manifest_entries(short: Shortfall, configs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The manifest's :data:`PARTIAL_KEY` and :data:`CONFIGS_KEY` of ``short`` for a job of
    ``configs`` (the spec's, in order)."""
    def why(i: int) -> str:
        if i in short.failed:
            return f"failed: {short.failed[i]}"
        if i == short.cut:
            return f"cut mid-way by the cancel ({short.cancelled}); its runs were dropped"
        if i in short.dropped:
            return "ran, but its runs were dropped with the call that failed"
        return f"not run: cancelled ({short.cancelled})" if short.cancelled else "not run"

    missing = [{"config": i, "label": config_label(c), "why": why(i)}
               for i, c in enumerate(configs) if i not in short.measured]
    record = {"measured": sorted(short.measured), "not_measured": missing,
              "total": len(configs), "cancelled": short.cancelled, "lost": short.lost}
    return {PARTIAL_KEY: [note_of(record)], CONFIGS_KEY: record}


def failed_text(missing: Mapping[str, Any]) -> str:
    """A failed config of a :data:`CONFIGS_KEY` record's ``not_measured`` (label, why), its
    config said once: ``config n=3 failed: kernel matmul raised ValueError: ...``, where the
    kernel's error names the config too (``kernel matmul at config n=3 raised``, as the
    manifests of such jobs hold it)."""
    label, why = missing.get("label", ""), str(missing.get("why", ""))
    return f"config {label} {why.replace(f' at config {label} ', ' ', 1)}"


def failed_entries(record: object) -> list[Mapping[str, Any]]:
    """The configs of a :data:`CONFIGS_KEY` record's ``not_measured`` that failed (why
    ``failed: <error>``), empty for any other record or none: a failed job's error is made of
    them (``runner._ended``), so the note says it."""
    missing = record.get("not_measured") if isinstance(record, Mapping) else None
    return [m for m in missing or () if isinstance(m, Mapping)
            and str(m.get("why", "")).startswith("failed: ")]


def note_of(record: Mapping[str, Any]) -> str:
    """The sentence of a :data:`CONFIGS_KEY` record: "Partial: 12 of 40 configs measured;
    cancelled (SIGTERM at ...); ..." or "config n=4096 failed: <error>; the other configs are
    shown"."""
    measured, total = len(record.get("measured") or ()), int(record.get("total") or 0)
    missing = list(record.get("not_measured") or ())
    failed = failed_entries(record)
    parts = [f"Partial: {measured:,} of {counted(total, 'config')} measured"]
    if record.get("cancelled"):
        parts.append(f"cancelled ({record['cancelled']})")
    cut = [m for m in missing if str(m.get("why", "")).startswith("cut mid-way")]
    parts += [f"config {m['label']} was cut mid-way and its runs dropped" for m in cut]
    parts += [failed_text(m) for m in failed[:3]]
    if len(failed) > 3:
        parts.append(f"{counted(len(failed) - 3, 'more config')} failed (Files page: "
                     "manifest.json)")
    if record.get("lost"):
        parts.append(str(record["lost"]))
    # the record keeps ISO 8601 times; the sentence a person reads, "09:12:33 UTC"-style ones
    return times_in("; ".join(parts) + "; the configs measured are shown.")


def late_cancel_note(how: str, done: bool) -> str:
    """The sentence of a cancel (``how``: ``"SIGTERM at ..."``, its ISO 8601 time written as a
    person reads it: :func:`~profiling_worker.bundle.number_text.times_in`) that came once
    measuring had ended: after every run was measured (``done``: the job ends done) or after the
    configs a partial job kept were measured."""
    what = "every run was measured" if done else "the configs kept were measured"
    ends = "; the job is done" if done else ""
    return (f"The cancel ({times_in(how)}) came after {what}: nothing was left to stop, so "
            f"the results were written whole and kept{ends}.")


def late_cancel(manifest: Mapping[str, Any]) -> str | None:
    """:func:`late_cancel_note` of a job whose manifest records a cancel that came once
    measuring had ended (:data:`LATE_CANCEL_KEY`), None for any other."""
    how = manifest.get(LATE_CANCEL_KEY)
    if not isinstance(how, str) or not how:
        return None
    return late_cancel_note(how, manifest.get("status") == "done")


def note(manifest: Mapping[str, Any]) -> str | None:
    """The note every view of a job that kept part of its configs shows at its top, None for
    any other (an import's :data:`PARTIAL_KEY` reasons are among its warnings already)."""
    record = manifest.get(CONFIGS_KEY)
    return note_of(record) if isinstance(record, Mapping) else None


def not_measured(manifest: Mapping[str, Any]) -> set[int]:
    """The config indices a partial job's manifest says were not measured (empty for any other
    job): their missing runs are said by :func:`note`, not again by the plausibility check."""
    record = manifest.get(CONFIGS_KEY)
    missing = record.get("not_measured") if isinstance(record, Mapping) else None
    return {int(m["config"]) for m in missing or () if isinstance(m, Mapping) and "config" in m}


def status_text(status: object, manifest: Mapping[str, Any]) -> str:
    """A job's status as the job lists say it (the sidebar's Job box, the job panel's store
    list, History): ``cancelled, partial: 3 of 6 configs`` for a job that kept part of its
    configs (:data:`CONFIGS_KEY`: a fresh user of session 22 read "cancelled" of a job whose
    configs measured every page shows), else the status alone (``done``). How a cancel came
    is said apart (:func:`cancel_said`: History's column of its own, the card, the banner)."""
    record = manifest.get(CONFIGS_KEY)
    text = str(status)
    if isinstance(record, Mapping):
        measured, total = len(record.get("measured") or ()), int(record.get("total") or 0)
        text += f", partial: {measured:,} of {counted(total, 'config')}"
    return text
