"""Docker and GPU counters (issue 25): the image runs as a non-root user, for whom
``--cap-add=SYS_ADMIN`` is never effective; nothing may offer that flag alone as the fix."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from profiling_worker.bundle.errors import COUNTER_PERMISSION_HINT

REPO = Path(__file__).resolve().parents[2]


#: Where counter permissions are advised: each names the host-side fix.
COUNTER_ADVICE = ("docs/gpu-setup.md", "docs/docker.md", "Dockerfile")


def _advice() -> dict[str, str]:
    """The README, every docs/ page, the Dockerfile and the worker's hint, by name."""
    files = [REPO / "README.md", REPO / "Dockerfile", *sorted((REPO / "docs").glob("*.md"))]
    return {**{str(f.relative_to(REPO)): f.read_text(encoding="utf-8") for f in files},
            "errors.COUNTER_PERMISSION_HINT": COUNTER_PERMISSION_HINT}


def test_the_image_runs_as_non_root_and_cap_add_comes_only_with_root() -> None:
    advice = _advice()
    assert re.search(r"^USER 10001:10001$", advice["Dockerfile"], re.M)
    for where, text in advice.items():
        for match in re.finditer(r"--cap-add=SYS_ADMIN", text):
            around = text[max(0, match.start() - 120):match.end() + 120]
            assert ("--user 0:0" in around
                    or re.search(r"does not (help|work)|does nothing", around, re.I)), (where, around)
    for where in (*COUNTER_ADVICE, "errors.COUNTER_PERMISSION_HINT"):
        assert "NVreg_RestrictProfilingToAdminUsers=0" in advice[where], where


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and util-linux setpriv")
def test_a_non_root_user_has_no_effective_capability_from_the_inheritable_set() -> None:
    """The Linux rule docs/docker.md states, shown without Docker: uid 10001 (the image's user)
    with CAP_SYS_ADMIN inheritable has no effective capabilities; root keeps it effective."""
    def caps(*args: str) -> dict[str, int]:
        out = subprocess.run(["setpriv", *args, "--inh-caps=+sys_admin", "cat",
                              "/proc/self/status"], capture_output=True, text=True, check=True)
        return {k: int(v, 16) for k, v in re.findall(r"^(Cap\w+):\s+([0-9a-f]+)$", out.stdout,
                                                      re.M)}

    sys_admin = 1 << 21  # CAP_SYS_ADMIN, linux/capability.h
    user = caps("--reuid=10001", "--regid=10001", "--clear-groups")
    assert user["CapInh"] & sys_admin and user["CapEff"] == 0
    assert caps("--reuid=0")["CapEff"] & sys_admin
