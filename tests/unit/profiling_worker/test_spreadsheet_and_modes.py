"""CSV cells a spreadsheet would run are neutralised (Parquet stays exact); bundle files get the
mode of an ordinary open() (0666 less the umask), not mkstemp's 0600."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from profiling_worker.bundle.loader import read_table
from profiling_worker.bundle.writer import table_csv, write_table
from profiling_worker.bundle.file_mode import process_umask
from profiling_worker.bundle.schema.manifest import write_manifest
from profiling_worker.bundle.spreadsheet import formula_columns, spreadsheet_safe
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]

HOSTILE = ['=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
           "\t=1", "plain", None]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"Annotation": HOSTILE, "Value": [-1.5, -2.0, 3.0, -0.0, 1e-9, 2.0, -7.0],
                         "Count": [-1, 2, 3, 4, 5, 6, 7]})


def test_text_cells_are_neutralised_numbers_stay_numbers() -> None:
    safe = spreadsheet_safe(_frame())
    assert safe["Annotation"].tolist()[:5] == ["'" + v for v in HOSTILE[:5]]
    assert safe["Annotation"].tolist()[5] == "plain" and safe["Annotation"].isna().tolist()[6]
    assert safe["Value"].tolist() == _frame()["Value"].tolist()  # negative numbers untouched
    assert safe["Count"].dtype == _frame()["Count"].dtype
    clean = pd.DataFrame({"Annotation": ["fp32"], "Value": [-1.0]})
    assert spreadsheet_safe(clean) is clean  # nothing to change: no copy


def test_bundle_csv_is_safe_and_parquet_exact(tmp_path: Path) -> None:
    write_table(tmp_path, "runs", _frame())
    exact = read_table(tmp_path, "runs")["Annotation"]
    assert exact.tolist()[:6] == HOSTILE[:6] and exact.isna().tolist()[6]  # Parquet: exact
    csv = pd.read_csv(io.BytesIO(table_csv(tmp_path, "runs") or b""), keep_default_na=False)
    assert all(not str(v).startswith(("=", "+", "-", "@", "\t")) for v in csv["Annotation"])
    assert csv["Value"].tolist()[:2] == [-1.5, -2.0] and csv["Count"].tolist()[0] == -1


def test_the_columns_pyarrow_names_give_the_same_csv_frame() -> None:
    """write_table looks only in formula_columns(its arrow table) (issue 40): the same frame as
    looking through every text column, for every table of every recorded bundle and hostile
    ones (strings, category, mixed None, a formula column name)."""
    frames = [pd.read_parquet(p) for p in sorted(SCENARIOS.glob("*/tables/*.parquet"))]
    hostile = _frame()
    frames += [hostile, hostile.astype({"Annotation": "category"}),
               hostile.assign(Empty=None, Flag=True).rename(columns={"Count": "=Count"}),
               hostile.astype({"Annotation": "string"})]
    assert len(frames) > 150
    for frame in frames:
        looked = formula_columns(pa.Table.from_pandas(frame, preserve_index=False))
        pd.testing.assert_frame_equal(spreadsheet_safe(frame, looked), spreadsheet_safe(frame))
    assert formula_columns(pa.Table.from_pandas(hostile, preserve_index=False)) == [0]


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_bundle_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        assert process_umask() == umask
        write_manifest(tmp_path, {"job_id": "j", "status": "done"})
        write_table(tmp_path, "runs", _frame())
    finally:
        os.umask(old)
    for path in (tmp_path / "manifest.json", tmp_path / "tables" / "runs.parquet"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
