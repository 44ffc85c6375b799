"""The HTML report of a job the real worker recorded on the cpu backend lists only the sections
that apply to a job that ran on no GPU (issue 37)."""

from __future__ import annotations

import re
from pathlib import Path

from app.core.pages import ANALYSES
from app.core.share.build import job_report
from app.core.share.launches import RULES_TITLE
from profiling_worker.bundle.loader import load_bundle


def test_a_cpu_jobs_report_lists_no_gpu_only_section(cpu_bundle_src: Path) -> None:
    html = job_report(load_bundle(cpu_bundle_src))
    contents = re.findall(r'<li><a href="#s\d+">(.*?)</a></li>', html)
    gpu_only = [a.title for a in ANALYSES if a.gpu_only]
    assert {"Roofline", "Clocks: SM clock each kernel ran at"} <= set(gpu_only)
    assert not set(contents) & {*gpu_only, "Deep dive", RULES_TITLE}, contents
    assert {"Size sweep", "Stability", "Kernels"} <= set(contents)
    # the contents say once what was left out and why
    assert ("Left out, as they need a GPU and this cpu-backend job ran on none: Bound, Roofline"
            in html)
