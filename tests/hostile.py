"""A bundle whose names are Markdown and HTML links and images: nsight-python's own CSV (H200
reference) with an image and an HTML link as the annotation, a link as the kernel name and an
image in the GPU name, imported by the real worker. Shared by the AppTest and browser tests."""

from __future__ import annotations

import sys
from pathlib import Path

from app.services import import_client

REPO = Path(__file__).resolve().parents[1]
NSPY_CSV = REPO / "tests" / "fixtures" / "reference" / "h200-nsight-0.9.6-matmul" / \
    "profiled_data-mm-0.csv"
IMAGE = "<a href='http://evil.example/h'>h</a> ![x](http://evil.example/i.png)"
LINK = "[click](http://evil.example/l)"
GPU = "NVIDIA H200 ![g](http://evil.example/g.png)"


def hostile_import(results: Path) -> str:
    """Import the hostile CSV into ``results``; returns the new job id."""
    text = NSPY_CSV.read_text(encoding="utf-8")
    lines = text.splitlines()
    header = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        cells = line.split(",")
        cells[header.index("Annotation")] = IMAGE
        cells[header.index("Kernel")] = LINK
        cells[header.index("GPU")] = GPU
        rows.append(",".join(cells))
    upload = results.parent / "upload"
    upload.mkdir(exist_ok=True)
    path = upload / "profiled_data-evil-0.csv"
    path.write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")
    (outcome,) = import_client.run_import([path], results, sys.executable)
    assert outcome.ok, (outcome.message, outcome.log)
    return outcome.job_id
