"""A table's CSV is made on demand from its Parquet file (issue 40: the writer writes Parquet
only), byte for byte the CSV the writer wrote beside it before: every recorded table with its
CSV (the shipped bundles of ``app/bundled`` and the recorded fixtures) is the expected text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from profiling_worker.bundle.schema import columns as C
from profiling_worker.bundle.writer import table_csv, write_table
from tests.scenarios import REPO

#: Every recorded table that kept its CSV, relative to the repository.
RECORDED = sorted(str(p.relative_to(REPO)) for root in ("app/bundled", "tests/fixtures")
                  for p in (REPO / root).glob(f"**/{C.TABLES_DIR}/*.csv")
                  if p.with_suffix(".parquet").is_file())


def test_every_recorded_table_is_listed() -> None:
    assert len(RECORDED) > 150  # the shipped bundles' 175 and the fixtures' own


@pytest.mark.parametrize("relpath", RECORDED)
def test_the_csv_made_from_parquet_is_the_recorded_csv(relpath: str) -> None:
    csv = REPO / relpath
    assert table_csv(csv.parents[1], csv.stem) == csv.read_bytes()


def test_the_writer_writes_parquet_only_and_the_csv_on_demand(tmp_path: Path) -> None:
    frame = pd.DataFrame({C.ANNOTATION: ["=cmd", "mm", None], C.CONFIG: [0, 1, 2],
                          C.VALUE: [0.1, float("nan"), 1e-5]})
    write_table(tmp_path, "runs", frame)
    assert sorted(p.name for p in (tmp_path / C.TABLES_DIR).iterdir()) == ["runs.parquet"]
    # what the writer wrote as the CSV copy: pandas' text, the formula cell made safe
    assert table_csv(tmp_path, "runs") == b"Annotation,Config,Value\n'=cmd,0,0.1\nmm,1,\n,2,1e-05\n"
    assert table_csv(tmp_path, "launches") is None
