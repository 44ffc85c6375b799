"""Table text: kernel names shortened in the middle and kept distinct, bidi controls shown."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from app.core import table_text
from tests.scenarios import SCENARIOS

REPO = Path(__file__).resolve().parents[3]
LAUNCHES = SCENARIOS / "h200-ncu-matmul-sweep" / "tables" / "launches.parquet"


def test_cublas_names_keep_their_distinguishing_end() -> None:
    """Issue 25: the tables cut both ``..._execute_kernel__5x_cublas`` and
    ``..._execute_split_k_kernel__5x_cublas`` to the same start."""
    names = pd.read_parquet(LAUNCHES, columns=["Kernel"])["Kernel"]
    short = table_text.distinct_short_names(names)
    assert len(set(short.values())) == names.nunique() == 13
    split_k = next(n for n in short if "execute_split_k_kernel" in n)
    assert len(split_k) == 129 and short[split_k].endswith("execute_split_k_kernel__5x_cublas")
    assert table_text.ELLIPSIS in short[split_k] and len(short[split_k]) < 100
    assert short["Kernel2"] == "Kernel2"


def test_the_table_gets_short_names_and_the_full_ones_last() -> None:
    frame = pd.read_parquet(LAUNCHES)
    shown, chars = table_text.short_kernel_names(frame)
    # the shortened names after the measured columns, the full ones last (at 1400x900 the
    # Kernels page's MeanTimeUs was off screen right of the names: a reviewer's find)
    assert list(shown.columns) == [*(c for c in frame.columns if c != "Kernel"), "Kernel",
                                   table_text.FULL_NAME]
    assert shown[table_text.FULL_NAME].tolist() == frame["Kernel"].tolist()
    assert chars is not None and shown["Kernel"].str.len().max() == chars
    assert frame["Kernel"].str.len().max() == 129  # the input is untouched (CSV downloads)


def test_bidi_controls_in_cells_and_names_are_made_visible() -> None:
    frame = pd.DataFrame({"Annotation\u202e": ["fp16 \u202elive", None, 3]})
    shown = table_text.visible_text(frame)
    assert list(shown.columns) == ["Annotation⟨U+202E⟩"]
    assert shown.iloc[0, 0] == "fp16 ⟨U+202E⟩live" and shown.iloc[2, 0] == 3
    plain = pd.DataFrame({"a": ["x"]})
    assert table_text.visible_text(plain) is plain


def test_joined_names_go_after_the_counts() -> None:
    """The Kernel counts table's ' + '-joined names, shortened, follow the counts: long names
    before them pushed the measured columns off screen (a reviewer's find)."""
    long = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_execute_kernel__5x_cublas"
    frame = pd.DataFrame({"Annotation": ["fp32"], "Kernels": [f"{long} + {long}_split_k"],
                          "KernelsPerRun": [2]})
    shown, chars = table_text.short_joined_names(frame)
    assert chars is not None
    assert list(shown.columns) == ["Annotation", "KernelsPerRun", "Kernels",
                                   table_text.FULL_NAMES]
    assert shown[table_text.FULL_NAMES].tolist() == frame["Kernels"].tolist()


def test_every_camel_case_column_is_headed_in_words_with_its_unit() -> None:
    """Issue 37: tables headed their columns with the frames' names (Stability's
    RelativeStdDevPct, CI95HalfWidthPct, StableMeasurement). Every such name of the bundle's
    tables and of the views' frames gets a header in words; a unit at the name's end is said
    in brackets; other names (Annotation, n, a metric's or a collector's own) stay."""
    import re

    from app.core import frame_columns as F
    from app.core.table_text import header
    from profiling_worker.bundle.schema import columns as C

    names = {v for mod in (C, F) for k, v in vars(mod).items()
             if k.isupper() and isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_]+", v)}
    from app.core.views.roofline import RATE_COLUMNS, rate_column

    # the roofline table's rates in its chart's unit (a cpu job's AchievedGFLOPs read
    # "Achieved G F L O ps", session 27's fresh user)
    names |= {rate_column(c, f"{p}FLOP/s") for c in RATE_COLUMNS for p in "KMGTP"}
    camel = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Z]|\b[A-Z] [A-Z]\b")  # or letters apart
    assert not [(n, header(n)) for n in names if camel.search(header(n))]
    assert header("AchievedGFLOPs") == "Achieved (GFLOP/s)"
    assert (header("HBMBytes"), header("L2HitPct")) == ("HBM (bytes)", "L2 hit (%)")
    assert header("NcuUs") == "ncu (µs)"  # the tool's own spelling
    assert header("PctOfDatasheetGBps") == "% of datasheet GB/s"  # in %, not in GB/s
    assert header(C.RSD) == "Relative std dev (%)" and header(C.STABLE) == "Stable"
    for name, unit in (("MeanTimeUs", "µs"), ("SmClockMHz", "MHz"), (C.CI95_HALF_PCT, "%")):
        assert header(name).endswith(f"({unit})")  # the unit, in brackets
    for name in (C.ANNOTATION, "n", "Run audit", "sm_clock", "gpu__time_duration.sum", "GPU"):
        assert header(name) == name
