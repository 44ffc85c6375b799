"""The import page's access to the importer client (app/services/import_client.py): save the
uploads, run ``python -m profiling_worker import`` with this server's settings, index and select
the new bundle. Pages talk to ``app/ui`` only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from app import settings
from app.services import import_client
from app.services.import_client import MAX_UPLOAD_MB, UPLOAD_TYPES, ImportOutcome
from app.ui import history, state


def import_uploads(uploads: Iterable[tuple[str, bytes]]) -> ImportOutcome:
    """Import ``(file name, content)`` uploads as one new bundle of the results folder and
    select it on every page when it worked.

    Returns:
        The outcome: ``ok`` and the new job id, or the message and hint of a refused upload
        (bad name or type), a file the importer rejected, or an upload that could not be saved
        (disk full). Never raises for those.
    """
    try:
        with tempfile.TemporaryDirectory(prefix="kprof-upload-") as tmp:
            paths = import_client.save_uploads(uploads, Path(tmp))
            outcome = import_client.run_import(paths, settings.results_dir(),
                                               settings.worker_python(), settings.worker_env())
    except import_client.UploadRejected as exc:
        outcome = ImportOutcome(False, "", exc.message, exc.hint)
    except OSError as exc:  # the upload could not be saved (disk full): say so, keep going
        outcome = ImportOutcome(False, "", f"cannot save the upload: {exc}",
                                "free space on the server's disk, then import again")
    if outcome.ok:
        history.sync_quietly()
        state.select_job(outcome.job_id)
    return outcome


__all__ = ["MAX_UPLOAD_MB", "UPLOAD_TYPES", "ImportOutcome", "import_uploads"]
