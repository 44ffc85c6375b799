"""What a bundle's ``.ncu-rep`` explains, asked of the worker (the app never imports ncu_report).

    <worker_python> -m profiling_worker rules BUNDLE      -> rule digest, CSV on stdout
    <worker_python> -m profiling_worker deepdive BUNDLE   -> deep-dive tables, JSON on stdout

Both print why they could not on stderr and exit 1 (no report, unreadable report).
"""

from __future__ import annotations

import io
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: A report of a few hundred launches takes seconds to read; a stuck worker must not hang a page.
REPORT_TIMEOUT_S = 300


@dataclass(frozen=True)
class ReportAnswer:
    """The worker's answer: ``ok`` with ``stdout``, else ``message`` (why not); ``note`` is
    the worker's stderr line when it succeeded (what it read)."""

    ok: bool
    stdout: str = ""
    message: str = ""
    note: str = ""

    def table(self) -> pd.DataFrame:
        """The digest table of a successful ``rules`` answer (columns as the worker's
        ``rule_digest.DIGEST_COLUMNS``; empty when the report holds no rule results)."""
        return pd.read_csv(io.StringIO(self.stdout))

    def data(self) -> dict[str, Any]:
        """The deep-dive dict of a successful ``deepdive`` answer
        (``profiling_worker.extract.ncu_sections.deep_dive``).

        Raises:
            ValueError: the worker printed no JSON object.
        """
        data = json.loads(self.stdout)
        if not isinstance(data, dict):
            raise ValueError("the worker's deepdive output is not a JSON object")
        return data


def ask(worker_python: str, command: str, bundle: Path, env: dict[str, str] | None = None
        ) -> ReportAnswer:
    """Run ``profiling_worker <command> <bundle>``; never raises for a worker that fails."""
    argv = [worker_python, "-m", "profiling_worker", command, str(bundle)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=REPORT_TIMEOUT_S,
                              env=env, check=False)
    except FileNotFoundError:
        return ReportAnswer(False, message=f"worker interpreter {worker_python} not found "
                                           "(set KPROF_WORKER_PYTHON)")
    except subprocess.TimeoutExpired:
        return ReportAnswer(False, message=f"the worker took more than {REPORT_TIMEOUT_S} s to "
                                           "read the report")
    tail = (proc.stderr or "").strip().splitlines()
    if proc.returncode != 0:
        return ReportAnswer(False, message=tail[-1] if tail else f"exit code {proc.returncode}")
    return ReportAnswer(True, stdout=proc.stdout, note=tail[-1] if tail else "")
