"""The registry of import kinds (importing/kinds.py, issue 38): each kind is told by content on
a recorded file, the supported-format list, the refusal hint, the import banner and the table of
docs/importing.md (importing/formats_table.py) come from it, and a module of importing/readers
registers its kind by itself, its row of the table with it, and is read alone."""

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.provenance import import_banner
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing import formats_table, kinds as R, readers, sniff
from profiling_worker.importing.assemble import import_nsight_output
from profiling_worker.importing.refusals import HINT_IMPORTABLE

ROOT = Path(__file__).parents[4]
CASES = ROOT / "tests" / "fixtures" / "import_cases"  # README.md there says where each is from
NSPY_CSV = CASES / "01-output-prefix" / "bench_profiled_data-smem_ops-0.csv"


def _told(path: Path) -> str | None:
    try:
        found = sniff.sniff(path)
    except ImportFailed:  # a case of a broken file
        return None
    return None if found is None else found.kind


def test_every_registered_kind_is_told_from_a_recorded_file():
    told = {_told(p) for p in CASES.rglob("*") if p.is_file()}
    missing = set(R.by_name()) - told
    assert not missing, f"no recorded file of kind(s) {sorted(missing)} under {CASES.name}"


def test_every_kind_is_read_by_a_known_reader_or_its_own_and_every_reader_reads_one():
    combined = [k for k in R.registered() if k.read is None]
    assert {k.reader for k in combined} == set(R.READERS)
    assert all(k.supported for k in R.registered() if k.reader != R.NOT_READ)
    row = (R.Layout("a file", "-", "-", "-"),)
    with pytest.raises(ValueError, match="give one of reader"):
        R.ImportKind("both", "a kind", R.NCU_EXPORTS, read=lambda paths: NotImplemented,
                     layouts=row)
    with pytest.raises(ValueError, match="give its layouts"):
        R.ImportKind("undocumented", "a kind", R.NCU_EXPORTS)


def test_the_supported_list_comes_from_the_registry_and_a_refusal_has_one_fix(tmp_path: Path):
    assert R.supported() == tuple(dict.fromkeys(k.supported for k in R.registered()
                                                if k.supported))
    assert all(line in R.hint_supported() for line in R.supported())
    odd = tmp_path / "notes.csv"
    odd.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as caught:
        import_nsight_output([odd], tmp_path / "out", "odd")
    # one fix (the commands that write an importable file), not the list of formats
    assert caught.value.hint == HINT_IMPORTABLE
    assert "; expected an nsight-python CSV" in caught.value.message


#: A kind with a reader of its own, as a module of importing/readers declares it (its reader
#: refuses, so that the test sees which reader the import called, without a job to build).
_TOY_READER = """
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing.kinds import ImportKind, Layout


def _read(paths):
    raise ImportFailed("toy reader called on " + ", ".join(p.name for p in paths), "none")


KIND = ImportKind("toy_gpu_trace", "a toy GPU trace", supported="toy GPU traces",
                  columns=("toy start (ns)", "toy duration (ns)"), read=_read,
                  layouts=(Layout("toy GPU trace CSV", "toy 1.0 (checked)",
                                  "columns `toy start (ns)`, `toy duration (ns)`", "refused"),))
"""


@pytest.fixture()
def toy_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module named ``toy_gpu_trace`` in a folder of :mod:`readers` (the registry as it is
    once such a module is added); the registry is read again before and after."""
    folder = tmp_path / "readers"
    folder.mkdir()
    (folder / "toy_gpu_trace.py").write_text(_TOY_READER, encoding="utf-8")
    monkeypatch.setattr(readers, "__path__", [*readers.__path__, str(folder)])
    R.registered.cache_clear()
    R.by_name.cache_clear()
    trace = tmp_path / "trace.csv"
    trace.write_text("toy start (ns),toy duration (ns)\n1000,2048\n", encoding="utf-8")
    yield trace
    monkeypatch.undo()
    sys.modules.pop(f"{readers.__name__}.toy_gpu_trace", None)
    R.registered.cache_clear()
    R.by_name.cache_clear()


def test_a_module_of_readers_registers_its_kind_and_reads_its_files_alone(toy_kind: Path,
                                                                          tmp_path: Path):
    assert R.registered()[-1].name == "toy_gpu_trace" and "toy GPU traces" in R.supported()
    assert sniff.sniff(toy_kind) is not None and sniff.sniff(toy_kind).kind == "toy_gpu_trace"
    with pytest.raises(ImportFailed, match="toy reader called on trace.csv"):
        import_nsight_output([toy_kind], tmp_path / "out", "toy")
    with pytest.raises(ImportFailed, match="which is read on its own") as caught:
        import_nsight_output([toy_kind, NSPY_CSV], tmp_path / "out", "mixed")
    assert NSPY_CSV.name in str(caught.value)
    assert caught.value.hint == "import these files separately"
    manifest = {"provenance": {"imported_from": ["trace.csv"],
                               "formats": {"trace.csv": "toy_gpu_trace"}}}
    assert "(a toy GPU trace)" in import_banner(manifest)
    assert formats_table.markdown().endswith(
        "| toy GPU trace CSV | `toy_gpu_trace` | toy 1.0 (checked) | columns `toy start (ns)`, "
        "`toy duration (ns)` | refused |\n\n" + formats_table.END)


def test_the_docs_table_is_written_from_the_registry():
    """docs/importing.md holds :func:`formats_table.markdown` byte for byte (after a change run
    ``python -m profiling_worker.importing.formats_table --write docs/importing.md``)."""
    page = (ROOT / "docs" / "importing.md").read_text(encoding="utf-8")
    assert formats_table.in_page(page) == page, (
        "docs/importing.md's table of supported formats differs from the registry: run "
        "python -m profiling_worker.importing.formats_table --write docs/importing.md")
    rows = formats_table.markdown().splitlines()[4:-2]
    assert len(rows) == sum(len(k.layouts) for k in R.registered())
    with pytest.raises(ValueError, match="no single"):
        formats_table.in_page("a page without the markers")


def test_each_kinds_rows_name_how_it_is_told():
    for kind in R.registered():
        told_by = kind.layouts[0].told_by  # the first layout: the full header
        missing = [c for c in kind.columns if f"`{c}`" not in told_by]
        assert not missing, f"{kind.name}: its layouts' told_by does not name column(s) {missing}"
        magic = kind.magic.rstrip(b"\x00").decode()
        assert not magic or f"`{magic}` magic" in told_by, kind.name


def test_the_batch_runs_guide_points_at_the_table_instead_of_listing_formats():
    doc = (ROOT / "docs" / "batch-runs.md").read_text(encoding="utf-8")
    section = re.split(r"\n## ", doc.split("## 6. Import", 1)[1], maxsplit=1)[0]
    assert "importing.md#supported-formats" in section
