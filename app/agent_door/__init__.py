"""The agent door: the dashboard's worker, job manager and regression gate as Model Context
Protocol tools (:mod:`.server`; the logic in :mod:`.door`). Outside the Streamlit layers: it
imports app.core and app.services only."""

from __future__ import annotations

import sys
from collections.abc import Sequence

MISSING_SDK = ("the agent door needs the MCP Python SDK: pip install "
               "\"kernel-profiling-dashboard[mcp]\" (or pip install \"mcp>=2.3,<3\")")


def main(argv: Sequence[str] | None = None) -> int:
    """``kernel-dashboard-mcp`` / ``python -m app.agent_door``: the server on stdio, or exit 2
    naming the package to install when the MCP SDK is missing."""
    try:
        from app.agent_door.server import main as serve
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "mcp":
            raise
        print(f"kernel-dashboard-mcp: {MISSING_SDK} ({exc})", file=sys.stderr)
        return 2
    return serve(argv)
