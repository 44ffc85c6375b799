"""Without the MCP SDK the agent door's command says which package to install and exits 2
(the dashboard itself needs no MCP: the SDK is the optional ``[mcp]`` extra)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_missing_sdk_names_the_extra_and_exits_2() -> None:
    code = ("import sys; sys.modules['mcp'] = None  # as if not installed\n"
            "from app.agent_door import main; sys.exit(main([]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2, proc.stderr
    assert 'pip install "kernel-profiling-dashboard[mcp]"' in proc.stderr
