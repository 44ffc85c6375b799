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


#: Right-to-left overrides (U+202E) in names: "evil" would read "live" if obeyed (issue 25).
BIDI_ANNOTATION = "fp16 \u202elive\u202c"
BIDI_KERNEL = "\u202elenrek_mm"
BIDI_GPU = "NVIDIA H200 \u2067\u202eevil\u2069"


def hostile_import(results: Path, annotation: str = IMAGE, kernel: str = LINK,
                   gpu: str = GPU) -> str:
    """Import the hostile CSV (these names in every row) into ``results``; returns the new job
    id."""
    text = NSPY_CSV.read_text(encoding="utf-8")
    lines = text.splitlines()
    header = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        cells = line.split(",")
        cells[header.index("Annotation")] = annotation
        cells[header.index("Kernel")] = kernel
        cells[header.index("GPU")] = gpu
        rows.append(",".join(cells))
    upload = results.parent / "upload"
    upload.mkdir(exist_ok=True)
    path = upload / "profiled_data-evil-0.csv"
    path.write_text("\n".join([lines[0], *rows]) + "\n", encoding="utf-8")
    (outcome,) = import_client.run_import([path], results, sys.executable)
    assert outcome.ok, (outcome.message, outcome.log)
    return outcome.job_id
