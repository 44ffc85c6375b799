"""``python -m app.agent_door``: the MCP server on stdio (:func:`app.agent_door.main`)."""

import sys

from app.agent_door import main

sys.exit(main())
