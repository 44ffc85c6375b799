"""The registry of import kinds (importing/kinds.py, issue 38): each kind is told by content on
a recorded file, the supported-format list and the refusal hint come from it, and the table of
docs/importing.md is tested against it."""

import re
from pathlib import Path

import pytest

from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import kinds as R, sniff
from profiling_worker.importing.assemble import import_nsight_output

ROOT = Path(__file__).parents[4]
CASES = ROOT / "tests" / "fixtures" / "import_cases"
#: One recorded file of each kind (tests/fixtures/import_cases/README.md says where each is from).
RECORDED = {
    R.NSIGHT_AGG: "01-output-prefix/bench_processed_data-smem_ops-0.csv",
    R.NSIGHT_RAW: "01-output-prefix/bench_profiled_data-smem_ops-0.csv",
    R.NCU_DETAILS: "08-details-rule-columns/ranges_details_base.csv",
    R.NCU_RAW: "09-nvtx-in-csv/ranges_raw.csv",
    R.NCU_REPORT: "10-two-launches-per-pass/ranges.ncu-rep.gz",
    R.NCU_TEXT: "12-ncu-console-text/ranges_text.log",
    R.NCU_LOG: "14-nvtx-nested/record.log",
}


def test_every_registered_kind_is_told_from_a_recorded_file():
    assert set(RECORDED) == set(R.BY_NAME), "a kind without a recorded file, or a stale entry"
    for kind, rel in RECORDED.items():
        found = sniff.sniff(CASES / rel)
        assert found is not None and found.kind == kind, rel


def test_every_kind_is_read_by_a_known_reader_and_every_reader_reads_one():
    assert {k.reader for k in R.KINDS} == set(R.READERS)
    assert all(k.supported for k in R.KINDS if k.reader != R.NOT_READ)


def test_the_supported_list_and_the_refusal_hint_come_from_the_registry(tmp_path: Path):
    assert R.SUPPORTED == tuple(dict.fromkeys(k.supported for k in R.KINDS if k.supported))
    assert sniff.SUPPORTED is R.SUPPORTED and sniff.HINT_SUPPORTED == R.HINT_SUPPORTED
    odd = tmp_path / "notes.csv"
    odd.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        import_nsight_output([odd], tmp_path / "out", "odd")
    assert all(line in caught.value.hint for line in R.SUPPORTED)


def _doc_rows() -> list[list[str]]:
    """The cells of docs/importing.md's "Supported formats" table, one list per row."""
    doc = (ROOT / "docs" / "importing.md").read_text(encoding="utf-8")
    section = doc.split("## Supported formats", 1)[1].split("\n## ", 1)[0]
    head = "| format | kind | versions | recognised by | read as |"
    assert head in section, "the table's columns changed: update this test with them"
    table = section.split(head, 1)[1].strip().split("\n\n", 1)[0]  # ends at a blank line
    return [[c.strip() for c in ln.strip().strip("|").split(" | ")]
            for ln in table.splitlines()[1:]]


def test_the_docs_table_names_every_kind_and_how_it_is_told():
    rows = _doc_rows()
    kinds = [row[1].strip("`") for row in rows]
    assert set(kinds) == set(R.BY_NAME), (f"docs/importing.md names {sorted(set(kinds))}, the "
                                          f"registry {sorted(R.BY_NAME)}")
    for kind in R.KINDS:
        told_by = rows[kinds.index(kind.name)][3]  # the first row of the kind: its full header
        missing = [c for c in kind.columns if f"`{c}`" not in told_by]
        assert not missing, f"{kind.name}: docs/importing.md does not name column(s) {missing}"
        magic = kind.magic.rstrip(b"\x00").decode()
        assert not magic or f"`{magic}` magic" in told_by, kind.name


def test_the_batch_runs_guide_points_at_the_table_instead_of_listing_formats():
    doc = (ROOT / "docs" / "batch-runs.md").read_text(encoding="utf-8")
    section = re.split(r"\n## ", doc.split("## 6. Import", 1)[1], maxsplit=1)[0]
    assert "importing.md#supported-formats" in section
