"""A refused file gets one fix, and the import texts write commands as code spans (a fresh
user's find: an SQLite file's message held the ncu commands and its fix listed the supported
kinds, two fixes drawn one over the other; hints and notes wrote `ncu --csv` as plain text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from profiling_worker.importing import import_nsight_output
from profiling_worker.importing import kinds as R
from profiling_worker.bundle.errors import ImportFailed
from profiling_worker.importing.refusals import (HINT_EMPTY, HINT_IMPORTABLE, HINT_NCU_EXPORT,
                                                 REFUSALS)
from profiling_worker.importing.textcsv import HINT_CSV, HINT_NCU_CSV

NSYS_STATS = ("Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),"
              "StdDev (ns),Name\n50.0,1000,10,100,100,90,110,5,kernel\n")


#: The head of an Nsight Systems SQLite export as the schema text holds its tables (made here:
#: no nsys export among the fixtures); test_what_a_file_is.py builds a real SQLite file too.
NSYS_SQLITE = (b"SQLite format 3\x00" + bytes(84)
               + b"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT)"
               + b"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL)")


@pytest.mark.parametrize(("name", "data", "what", "fix"), [
    ("report.csv", NSYS_SQLITE, "an Nsight Systems SQLite export", HINT_NCU_EXPORT),
    ("report.sqlite.txt", NSYS_SQLITE, "an Nsight Systems SQLite export", HINT_NCU_EXPORT),
    # a plain SQLite database is not Nsight Systems' (issue: every .sqlite was called that)
    ("report.csv", b"SQLite format 3\x00" + bytes(200), "an SQLite database", HINT_IMPORTABLE),
    ("kern_sum.csv", NSYS_STATS.encode(), "an Nsight Systems CSV export", HINT_NCU_EXPORT),
])
def test_a_refused_file_of_a_kind_with_its_own_fix_gets_that_fix_alone(
        tmp_path: Path, name: str, data: bytes, what: str, fix: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ImportFailed) as caught:
        import_nsight_output([path], tmp_path / "s", "x")
    assert what in caught.value.message
    assert caught.value.hint == fix  # the fix, once
    assert "ncu --nvtx" not in caught.value.message  # not in the message as well
    assert not caught.value.hint.startswith("supported")


def _plain(text: str) -> str:
    """``text`` without its code spans."""
    return "".join(part for i, part in enumerate(text.split("`")) if i % 2 == 0)


#: A command or option written as plain text.
COMMAND = re.compile(r"\bncu --|\bnsys \w|pip install|(?<![\w`])--[a-z]")


def test_the_import_texts_write_commands_as_code() -> None:
    texts = [*R.supported(), R.hint_supported(), HINT_NCU_CSV, HINT_CSV, HINT_NCU_EXPORT,
             HINT_IMPORTABLE, HINT_EMPTY,
             *(r.what for r in REFUSALS), *(r.fix for r in REFUSALS)]
    plain = [t for t in texts if COMMAND.search(_plain(t))]
    assert plain == []
    assert all(t.count("`") % 2 == 0 for t in texts)  # every span closed
