"""Words for any Nsight Compute metric name (issue 37: only the metrics of ``M.WORDS`` had
words; the others read bare on pages that named the rest in words)."""

from __future__ import annotations

import pandas as pd
import pytest

from app.core import frame_columns as F, metric_roles
from app.core.metric_words import ROLLUPS, SUBMETRICS, UNITS, derived_words, metric_words
from profiling_worker.bundle.schema import columns as C, metrics as M

#: Names WORDS lacks, from the bundled H200 reports and Nsight Compute's section files.
BARE = ("lts__t_sectors_srcunit_tex_op_read.sum", "sm__inst_executed.avg.per_cycle_active",
        "dram__bytes_read.sum.per_second", "launch__waves_per_multiprocessor",
        "l1tex__throughput.avg.pct_of_peak_sustained_active", "device__attribute_l2_cache_size",
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio")


@pytest.mark.parametrize("name", BARE)
def test_a_name_words_lacks_reads_in_words_from_its_parts(name: str) -> None:
    said = derived_words(name)
    assert "__" not in said and "." not in said and said != name, said
    unit = name.split("__")[0]
    if said.startswith("Warp stall: "):  # a warp state's ratio: cycles per instruction
        return
    assert said.startswith(UNITS[unit]), said
    for part in name.split(".")[1:]:  # each rollup and submetric said, a total by nothing
        assert {**ROLLUPS, **SUBMETRICS}[part] in said


def test_the_parts_are_said_as_nsight_compute_means_them() -> None:
    assert derived_words("lts__t_sectors_srcunit_tex_op_read.sum") == "L2 sectors from TEX read"
    assert derived_words("sm__inst_executed.avg.per_cycle_active") == \
        f"SM instructions executed ({ROLLUPS['avg']}, {SUBMETRICS['per_cycle_active']})"
    stall = derived_words(f"{M.STALL_PREFIX}long_scoreboard{M.STALL_SUFFIX}")
    assert "long scoreboard" in stall and M.STALL_PREFIX not in stall


def test_words_keep_their_own_entry_and_other_names_as_they_are() -> None:
    assert all(metric_words(m) == w for m, w in M.WORDS.items())
    for name in ("my_counter", "compute_tflops", ""):
        assert metric_words(name) == name  # no Nsight Compute name: nothing to read


def test_every_naming_function_uses_the_words_with_the_raw_name_beside() -> None:
    """The picker, a chart's words and a table's words column name a bare metric in words;
    the raw name stays the key (Metric column) and beside the words in a picker."""
    name = BARE[0]
    assert metric_roles.words({}, name) == derived_words(name)
    assert metric_roles.picker({}, {name: "sector"})(name) == \
        f"{derived_words(name)} [sector] ({name})"
    table = metric_roles.with_words(pd.DataFrame({C.METRIC: [name], C.AVG: [1.0]}), {})
    assert table[C.METRIC].tolist() == [name]
    assert table[F.METRIC_WORDS].tolist() == [derived_words(name)]
    imported = {"metric_roles": {name: {"role": "derived"}}}  # an imported role says more
    assert metric_roles.words(imported, name) == metric_roles.label(imported, name)
