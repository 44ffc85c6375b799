"""scripts/local_slurm.sh leaves nothing behind when asked: ``remove`` (what ``.ci/run`` runs at
exit on the folder it made) stops the daemons and deletes the folder with its munge key. No
Slurm needed: with no daemon running the stop part has nothing to end."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "local_slurm.sh"


def test_remove_deletes_the_slurm_folder_and_its_munge_key(tmp_path: Path) -> None:
    folder = tmp_path / "kprof-slurm"
    (folder / "munge").mkdir(parents=True)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    (folder / "slurm.conf").write_text("ClusterName=kprof\n", encoding="utf-8")
    proc = subprocess.run(["bash", str(SCRIPT), "remove"], capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "KPROF_SLURM_DIR": str(folder)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not folder.exists(), f"{key} left behind: {proc.stdout}{proc.stderr}"

