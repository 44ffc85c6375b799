"""Two uploads of one program can be compared (a new user's find): an import's kernel id is its
file's name (``live_raw``, ``ranges``), which says nothing of the code, so the Compare page
refused "no kernel in common" for two profiles of the same regions and sizes. Real files: case 13's
live ncu CSV and case 10's report (the same program, recorded on the H200)."""

from __future__ import annotations

from pathlib import Path

from profiling_worker.bundle.loader import load_bundle
from app.core.provenance import is_imported
from app.core.views.compare import JobSummary, candidates, compare_frame, CompareOptions
from profiling_worker.importing.grouping import import_each
from profiling_worker.bundle.schema import columns as C

CASES = Path(__file__).resolve().parents[2] / "fixtures" / "import_cases"


def _imported(tmp_path: Path) -> list:
    sources = [CASES / "13-two-runs-one-upload" / "live_raw.csv",
               CASES / "10-two-launches-per-pass" / "ranges.ncu-rep.gz"]
    events = list(import_each(sources, tmp_path / "store", "two"))
    assert [e["event"] for e in events] == ["result", "result"], events
    return [load_bundle(e["bundle"]) for e in events]


def test_two_imports_of_one_program_are_offered_for_compare(tmp_path: Path) -> None:
    first, second = _imported(tmp_path)
    assert set(first.spec.kernels) != set(second.spec.kernels)  # named after their files
    jobs = [JobSummary.of(b.job_id, "", b.spec, is_imported(b.manifest)) for b in (first, second)]
    assert all(j.imported for j in jobs)
    offered, refused = candidates(first.job_id, jobs)
    assert offered == [second.job_id] and refused == {}
    rows = compare_frame(first, second, CompareOptions(metric=C.GPU_TIME))
    assert len(rows) and rows[C.ANNOTATION].nunique() >= 1  # matched by region and config


def test_jobs_of_the_catalog_still_need_a_kernel_in_common(tmp_path: Path) -> None:
    first, _ = _imported(tmp_path)
    base = JobSummary(job_id="a", kernels=("matmul",), configs=((("n", 64),),))
    other = JobSummary(job_id="b", kernels=("softmax",), configs=((("n", 64),),))
    assert candidates("a", [base, other])[1] == {"b": "no kernel in common (softmax)"}
    imported = JobSummary.of(first.job_id, "", first.spec, is_imported(first.manifest))
    assert "no kernel in common" not in (candidates("a", [base, imported])[1].get(first.job_id)
                                          or "")
