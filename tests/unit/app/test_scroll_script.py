"""The job panel's scroll script (issue 37: after Run the job's card is brought into sight)
carries the card's key as data: a job id, whatever its characters, cannot end the script or
change the selector (job_panel.scroll_script)."""

from __future__ import annotations

import json
import re

import pytest

from app.sidebar.job_panel import scroll_script
from app.ui import state


@pytest.mark.parametrize("job_id", ["20261207-1200-ab12", "x</script><script>alert(1)//",
                                    "a'); alert(1); ('", 'q"]{}\\n'])
def test_the_card_key_stays_a_string(job_id: str) -> None:
    script = scroll_script(job_id)
    assert script.count("</script>") == 1 and script.endswith("</script>")
    literal = re.search(r"CSS\.escape\((\".*?(?<!\\)\")\)", script)
    assert literal is not None
    assert json.loads(literal.group(1)) == state.key("panel", f"job-{job_id}")
