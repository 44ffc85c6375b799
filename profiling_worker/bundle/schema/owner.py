"""Who owns a job: the process a manifest names, so that every reader of the result store
(another dashboard's job panel, restart recovery) can say which process runs it and check
whether it still lives.

Two entries of ``manifest.json``, each ``{"pid": int, "host": str, "process": str}``:

* ``server``: the process that queued the job and will run or merge it (a dashboard server,
  the agent door, ``kernel-sweep``), written by the app's job queue at submit;
* ``worker``: the worker process profiling it, written by the worker itself when it starts
  (:func:`profiling_worker.job.runner.run_job`). A job run from a shell
  (``python -m profiling_worker run JOB_DIR``) has no ``server``: its worker owns it, named
  :data:`WORKER_CLI`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from typing import Any

#: The ``process`` of a worker that nothing queued (run from a shell, a script, CI).
WORKER_CLI = "worker CLI"
#: The ``process`` of a worker a server started (that server owns the job).
WORKER = "worker"


def owner_entry(process: str) -> dict[str, Any]:
    """This process as a manifest's ``server`` or ``worker`` entry: ``{"pid", "host",
    "process"}`` (``process``: what a person reads, e.g. ``dashboard server``)."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "process": process}


def owner_of(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The entry of the process that owns the job: its ``server``, else its ``worker`` (a job
    run from a shell), else ``{}`` (a bundle written before owners were recorded, an import)."""
    for key in ("server", "worker"):
        entry = manifest.get(key)
        if isinstance(entry, dict) and entry:
            return entry
    return {}


def owner_text(manifest: Mapping[str, Any], unnamed: str = "dashboard server") -> str:
    """The owner as a person reads it: ``kernel-sweep pid 123 on host h``. ``unnamed``: the
    name of an owner entry without ``process`` (written before processes were named: only
    dashboard servers wrote one then)."""
    owner = owner_of(manifest)
    return (f"{owner.get('process') or unnamed} pid {owner.get('pid', '?')} on host "
            f"{owner.get('host', '?')}")


def is_this_process(entry: Mapping[str, Any]) -> bool:
    """True when ``entry`` names this very process (its pid on this host)."""
    return entry.get("pid") == os.getpid() and entry.get("host") == socket.gethostname()
