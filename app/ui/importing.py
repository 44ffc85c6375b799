"""The import page's access to the importer client (app/services/import_client.py): save the
uploads, run ``python -m profiling_worker import --each`` with this server's settings, index the
new bundles and select the first. Pages talk to ``app/ui`` only.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Iterable
from typing import Any
from pathlib import Path

from profiling_worker.bundle.inflate import scratch_dir

from app import settings
from app.core import provenance
from app.services import import_client
from app.services.import_client import MAX_UPLOAD_MB, UPLOAD_TYPES, ImportOutcome
from app.ui import cached, history, state


def import_uploads(uploads: Iterable[tuple[str, bytes]], nvtx: str = "innermost"
                   ) -> list[ImportOutcome]:
    """Import ``(file name, content)`` uploads into the results folder, each report or table
    (with the files that belong to it) as a bundle of its own, and select the first bundle
    made on every page; all of them appear in the job selector. ``nvtx``: a launch's region
    in nested NVTX ranges of an ncu CSV or console text, ``innermost`` or ``stack``.

    Returns:
        One outcome per group of files (``ok`` and the new job id, or the worker's message and
        hint) and one per upload refused before the import (bad name or type, empty, too large);
        a single failure when the uploads could not be saved (disk full). Never raises for
        those; one bad file never stops the others.
    """
    try:
        # in the server's scratch folder: a killed server's uploads go at the next start
        with tempfile.TemporaryDirectory(prefix="upload-", dir=scratch_dir()) as tmp:
            paths, rejected = import_client.save_uploads(uploads, Path(tmp))
            outcomes = [ImportOutcome(False, "", r.message, r.hint, files=(r.name,))
                        for r in rejected]
            if paths:
                outcomes[:0] = import_client.run_import(
                    paths, settings.results_dir(), settings.worker_python(),
                    settings.worker_env(), nvtx=nvtx)
    except import_client.UploadRejected as exc:
        outcomes = [ImportOutcome(False, "", exc.message, exc.hint)]
    except OSError as exc:  # the upload could not be saved (disk full): say so, keep going
        outcomes = [ImportOutcome(False, "", f"cannot save the upload: {exc}",
                                  "free space on the server's disk, then import again")]
    made = [o.job_id for o in outcomes if o.ok]
    if made:
        history.sync_quietly()
        state.select_job(made[0])
        outcomes = _said_if_imported_before(outcomes)
    return outcomes


def _said_if_imported_before(outcomes: list[ImportOutcome]) -> list[ImportOutcome]:
    """Each imported outcome with the earlier job of the same files, if any, in ``same_as``
    (compared by the SHA-256 the importer records of each file: :func:`provenance.same_files`);
    the import stands (a user may want a second copy), the page says so."""
    bundles, _problems = cached.list_bundles()
    manifests = [(b.job_id, b.manifest) for b in bundles]
    by_id = dict(manifests)
    out = []
    for o in outcomes:
        same = provenance.same_files(o.job_id, by_id[o.job_id], manifests) \
            if o.ok and o.job_id in by_id else None
        out.append(dataclasses.replace(o, same_as=same) if same else o)
    return out


def group_refusals(outcomes: list[ImportOutcome]) -> list[ImportOutcome]:
    """The failed outcomes, one per distinct message and fix, naming every file it holds in
    ``files`` (a mixed upload showed 8 red boxes, each repeating the same 400-character
    reason); each message is the reason alone, as its box's title names the files (a fresh user
    of session 22 read the file's name twice in one box)."""
    groups: dict[tuple[str, str], list[ImportOutcome]] = {}
    for o in outcomes:
        if not o.ok:
            groups.setdefault((_reason(o), o.hint), []).append(o)
    out = []
    for (reason, _hint), same in groups.items():
        files = tuple(f for o in same for f in o.files)
        out.append(dataclasses.replace(same[0], files=files, message=reason))
    return out


def _reason(outcome: ImportOutcome) -> str:
    """The message without the ``<file>: `` it begins with when it names its own file."""
    for name in outcome.files:
        if outcome.message.startswith(f"{name}: "):
            return outcome.message[len(name) + 2:]
    return outcome.message


def failed_kind(names: str) -> str:
    """The title of the box of files not imported (``names``: their names, joined); the
    message after it is the reason alone (:func:`group_refusals`)."""
    return f"import of {names} failed"


def already_here_text(job_id: str, files: str, where: str) -> str:
    """The one box of a bundle zip whose job is already on this dashboard (the same
    manifest.json): nothing was imported, that job is shown. ``files``: the zip's name as
    Markdown; ``where``: where the job is shown. Its worker note said the same in a second box
    (a fresh user of session 22)."""
    return (f"Already here as **{job_id}** ({files}: the same manifest.json); nothing was "
            f"imported; {where}.")


def release_uploads(files: Iterable[Any]) -> None:
    """Drop uploaded files (Streamlit ``UploadedFile``) from the server's memory once they are
    imported: the bundle keeps its own copy, and Streamlit would hold them until the browser
    session ends (issue 26: 1.2 GB for six uploads, still there 15 minutes after the browser
    closed)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return
    # the memory manager's method (the manager protocol has none): absent elsewhere, keep them
    remove = getattr(ctx.uploaded_file_mgr, "remove_file", None)
    if remove is None:
        return
    for f in files:
        remove(ctx.session_id, f.file_id)


def one_limit_css(key: str) -> str:
    """A style-only ``st.html`` body that hides Streamlit's own "200MB per file" in the drop
    zone of the uploader keyed ``key`` (and ``<key>-<n>``, the new one after each import): a
    fresh user read it beside the Import page's caption, which gives every limit (per file,
    per tab, all tabs) and what a file past them gets, as two limits. Said once, there."""
    return (f"<style>[class*='st-key-{key}'] "
            "[data-testid='stFileUploaderDropzoneInstructions']{display:none}</style>")


__all__ = ["MAX_UPLOAD_MB", "UPLOAD_TYPES", "ImportOutcome", "already_here_text",
           "group_refusals", "import_uploads", "one_limit_css", "release_uploads"]
