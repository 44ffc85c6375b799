"""What a refused file is, told by its content first, then its name, by one rule on the command
line and the Import page alike (a fresh user's finds: a plain SQLite named .sqlite was called an
Nsight Systems report; .zip, .json, .png and an empty .json got the general message by their
extension; a CSV without its Metric column and a text .ncu-rep got the whole formats list; the
empty-file fix wrote its commands as plain text).

The rule (``refusals.Refused``): ``<file>: <what it is>; expected <what was expected>``, and one
fix, any command in it a code span. Real files where there are some (fixtures: nsight-python
CSVs, a bundle's manifest.json and Parquet table, the app's PNG icon); the others made here.
"""

from __future__ import annotations

import ast
import io
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest

from app.services import import_client as I
from profiling_worker.importing import kinds as R, sniff
from profiling_worker.importing.grouping import import_each
from profiling_worker.importing.refusals import (HINT_CSV, HINT_EMPTY, HINT_IMPORTABLE,
                                                 HINT_NCU_EXPORT)
from tests.scenarios import scenario_dir

REPO = Path(__file__).resolve().parents[4]
CASES = REPO / "tests" / "fixtures" / "import_cases"
GOOD = CASES / "01-output-prefix" / "bench_profiled_data-smem_ops-0.csv"
BUNDLE = scenario_dir("h200-cupti-timeline")
ICON = REPO / "app" / "assets" / "icon.png"

#: A command or option written as plain text (test_one_fix's rule).
COMMAND = re.compile(r"\bncu -|\bnsys \w|\b(gzip|gunzip|unzip) (FILE|-)|pip install|output_csv=|"
                     r"(?<![\w`])--[a-z]")


def _plain(text: str) -> str:
    return "".join(part for i, part in enumerate(text.split("`")) if i % 2 == 0)


def _sqlite(tmp_path: Path, tables: list[str]) -> bytes:
    path = tmp_path / f"db-{len(tables)}.sqlite"
    with sqlite3.connect(path) as db:
        for t in tables:
            db.execute(f"CREATE TABLE {t} (id INTEGER PRIMARY KEY, value TEXT)")
    return path.read_bytes()


def _zip(entries: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, text in entries.items():
            z.writestr(name, text)
    return out.getvalue()


def _without_metric() -> bytes:
    """The real nsight-python CSV with its Metric column dropped (an edited file)."""
    rows = [ln.split(",") for ln in GOOD.read_text(encoding="utf-8").splitlines()]
    drop = rows[0].index("Metric")
    return "\n".join(",".join(f for i, f in enumerate(r) if i != drop) for r in rows).encode()


#: Nsight Systems' SQLite export names these tables (``nsys export --type sqlite``).
NSYS_TABLES = ["StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "TARGET_INFO_GPU", "NVTX_EVENTS"]


def _bad_files(tmp_path: Path) -> list[tuple[str, bytes, str, str]]:
    """(name, content, what the message must say it is, its fix)."""
    return [
        ("history.sqlite", _sqlite(tmp_path, ["bundles", "tags"]),
         "an SQLite database (tables bundles, tags), not an Nsight Systems", HINT_IMPORTABLE),
        ("profile.sqlite", _sqlite(tmp_path, NSYS_TABLES), "an Nsight Systems SQLite export",
         HINT_NCU_EXPORT),
        ("plain.csv", _sqlite(tmp_path, ["t"]), "an SQLite database (tables t)", HINT_IMPORTABLE),
        ("results.zip", _zip({"a.csv": "x"}), "a zip archive", "unpack it (`unzip FILE`)"),
        ("results.csv", _zip({"a.csv": "x"}), "a zip archive", "unpack it (`unzip FILE`)"),
        ("book.xlsx", _zip({"[Content_Types].xml": "", "xl/workbook.xml": ""}),
         "an Excel workbook", "save each sheet as CSV"),
        ("manifest.json", (BUNDLE / "manifest.json").read_bytes(), "JSON text", HINT_IMPORTABLE),
        ("chart.png", ICON.read_bytes(), "a PNG image", HINT_IMPORTABLE),
        ("shot.png", b"\x89PNG\r\n\x1a\n" + bytes(64), "a PNG image", HINT_IMPORTABLE),
        ("empty.json", b"", "an empty file (0 bytes)", HINT_EMPTY),
        ("empty.csv", b"", "an empty file (0 bytes)", HINT_EMPTY),
        ("aggregated.parquet", (BUNDLE / "tables" / "aggregated.parquet").read_bytes(),
         "a Parquet table", HINT_IMPORTABLE),
        ("profiled_data-x-0.csv", _without_metric(), "without its Metric column", HINT_CSV),
        ("report.ncu-rep", b"plain text bytes under a report name\n",
         "text that is not a table, not an Nsight Compute report", "upload the report file"),
        ("notes.txt", b"just words\n", "text that is not a table", HINT_IMPORTABLE),
    ]


def _cli(tmp_path: Path, name: str, data: bytes) -> tuple[str, str]:
    """The worker's (message, hint) for the file alone: ``import --each``, as the page runs it."""
    folder = tmp_path / f"cli-{name}"
    folder.mkdir()
    (folder / name).write_bytes(data)
    (event,) = import_each([folder / name], tmp_path / "out", f"j-{name}")
    assert event["event"] == "error", event
    return event["message"], event["hint"]


def _app(tmp_path: Path, name: str, data: bytes) -> tuple[str, str]:
    folder = tmp_path / f"app-{name}"
    folder.mkdir()
    paths, (refused,) = I.save_uploads([(name, data)], folder)
    assert paths == [] and list(folder.iterdir()) == []
    return refused.message, refused.hint


def test_each_bad_file_is_named_by_its_content_with_one_fix_the_same_on_both_paths(
        tmp_path: Path) -> None:
    for name, data, what, fix in _bad_files(tmp_path):
        cli, app = _cli(tmp_path, name, data), _app(tmp_path, name, data)
        assert cli == app, name  # the command line and the Import page say one thing
        message, hint = cli
        assert message.startswith(f"{name}: ") and what in message, (name, message)
        assert "; expected " in message, (name, message)  # what was expected
        assert fix in hint, (name, hint)
        assert not hint.startswith("supported") and hint.count("Fix") == 0, (name, hint)
        assert COMMAND.search(_plain(hint)) is None and hint.count("`") % 2 == 0, (name, hint)
        assert COMMAND.search(_plain(message)) is None, (name, message)


def test_a_plain_sqlite_is_not_called_nsight_systems(tmp_path: Path) -> None:
    plain = sniff.refusal("index.sqlite", _sqlite(tmp_path, ["bundles", "tags"]))
    nsys = sniff.refusal("x.db", _sqlite(tmp_path, NSYS_TABLES))
    assert "Nsight Systems SQLite export" not in plain.what and plain.fix == HINT_IMPORTABLE
    assert nsys.what.startswith("an Nsight Systems SQLite export (tables ")
    assert nsys.fix == HINT_NCU_EXPORT


@pytest.mark.parametrize(("name", "head", "what"), [
    ("a.bin", b"\xff\xd8\xff\xe0" + bytes(20), "a JPEG image"),
    ("a.bin", b"GIF89a" + bytes(20), "a GIF image"),
    ("a.bin", b"%PDF-1.7\n" + bytes(20), "a PDF document"),
    ("a.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(20), "an Excel 97-2003"),
    ("a.bin", b"\x7fELF" + bytes(20), "an executable"),
    ("a.pkl", b"\x80\x04\x95" + bytes(20), "a Python pickle"),
    ("a.gz", b"\x1f\x8b\x08\x00" + bytes(20), "a gzip file that holds no Nsight Compute report"),
    ("page.csv", b"<!DOCTYPE html><html><body>sign in</body></html>", "an HTML page"),
    ("bom.csv", b"\xef\xbb\xbf", "only a byte-order mark"),
    ("raw.csv.gz", GOOD.read_bytes(), "named .gz but not gzip-compressed"),
])
def test_the_classifier_says_what_a_file_is(name: str, head: bytes, what: str) -> None:
    why = sniff.refusal(name, head)
    assert what in why.what and why.fix and why.message(name).startswith(f"{name}: ")


def test_supported_content_is_not_refused_whatever_its_name() -> None:
    data = GOOD.read_bytes()
    assert sniff.upload_refusal("renamed.txt", data) is None
    assert sniff.upload_refusal("odd.ncu-rep", data) is None  # content wins: a CSV it is
    assert sniff.kind_words("x.dat", data) == R.by_name()[R.NSIGHT_RAW].words


def test_a_supported_file_under_another_name_is_told_to_be_renamed(tmp_path: Path) -> None:
    paths, (refused,) = I.save_uploads([("run.dat", GOOD.read_bytes())], tmp_path)
    assert paths == []
    assert refused.message.startswith("run.dat: nsight-python per-run CSV (profiled_data) by its "
                                      "content, named .dat; expected a name ending .csv")
    assert refused.hint == "rename it `run.csv` and upload it again"


def test_one_bad_file_costs_the_others_nothing(tmp_path: Path) -> None:
    uploads = [(n, d) for n, d, _w, _f in _bad_files(tmp_path)] + [(GOOD.name, GOOD.read_bytes())]
    (tmp_path / "up").mkdir()
    paths, refused = I.save_uploads(uploads, tmp_path / "up")
    assert [p.name for p in paths] == [GOOD.name]
    assert len(refused) == len(uploads) - 1
    assert all(r.message.startswith(f"{r.name}: ") and r.hint for r in refused)


def _literal(node: ast.expr) -> str:
    """The text of a string expression (placeholders for what is computed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_literal(v) if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) + _literal(node.right)
    return "{}"


def test_every_refusal_text_of_the_import_writes_its_commands_as_code() -> None:
    """Every refusal the import can give (worker and upload check): its message and fix write
    commands as code spans (the empty-file and by-name fixes wrote `ncu -o` as plain text)."""
    files = [*(REPO / "profiling_worker" / "importing").rglob("*.py"),
             REPO / "app" / "services" / "import_client.py", REPO / "app" / "ui" / "importing.py"]
    made = ("ImportFailed", "UploadRejected", "Refused", "Refusal", "ImportOutcome")
    plain = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "func", None)
            if isinstance(node, ast.Call) and getattr(name, "id", getattr(name, "attr", "")) in made:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    text = _literal(arg)
                    if COMMAND.search(_plain(text)) or text.count("`") % 2:
                        plain.append(f"{path.name}:{node.lineno}: {text[:80]}")
    assert plain == []


def test_a_binary_file_of_no_known_kind_names_its_first_bytes_in_hex() -> None:
    """A fresh user of session 22 read ``b'\\x00\\x01garbag'``, a Python bytes literal cut
    mid-word: the first bytes are written as hex, the file's name once."""
    head = b"\x00\x01garbage that is no table"
    why = sniff.refusal("junk.bin", head)
    assert sniff.first_bytes(head) == "starts with bytes 00 01 67 61 72 62 61 67 …"
    assert sniff.first_bytes(head) in why.what and "b'" not in why.what
    assert why.message("junk.bin").count("junk.bin") == 1


@pytest.mark.parametrize(("head", "count", "said"), [
    (b"", 8, "is empty"), (b"\x00\x01", 8, "starts with bytes 00 01"),
    (b"abcd", 4, "starts with bytes 61 62 63 64"), (b"abcde", 4, "starts with bytes 61 62 63 64 …"),
])
def test_first_bytes_marks_a_cut_with_an_ellipsis(head: bytes, count: int, said: str) -> None:
    assert sniff.first_bytes(head, count) == said


def test_a_gz_name_on_plain_content_names_its_bytes_and_gzips() -> None:
    why = sniff.refusal("raw.csv.gz", GOOD.read_bytes())
    assert sniff.first_bytes(GOOD.read_bytes(), 4) in why.what and "1f 8b" in why.what
    assert "b'" not in why.what
