"""A table over STYLED_CELLS cells whose value columns hold several units sorts by value (issue
37): above the limit app/ui/panels.py wrote such a column per unit as text, so a click on the
header put "1,535,586,415" before "183,360". It now stays numeric with one format for the whole
column, and a caption says so; a table under the limit keeps a format per unit (a Styler).
Either way the frame handed to st.dataframe holds the values at full precision: its toolbar's
CSV download writes them."""

from __future__ import annotations

import json

import pandas as pd
from streamlit.testing.v1 import AppTest


def _script(rows: int) -> None:
    import numpy as np
    import pandas as pd

    from app.ui import panels

    units = np.array(["ns", "Hz", "%", "byte"])[np.arange(rows) % 4]
    values = np.array([183_360.0, 1_535_586_414.7, 86.5977, 4_096.0])[np.arange(rows) % 4]
    frame = pd.DataFrame({"Metric": [f"metric_{i}" for i in range(rows)], "Unit": units,
                          "AvgValue": values * (1 + np.arange(rows) / rows),
                          "CI95_Lower": values * 0.99, "CI95_Upper": values * 1.01})
    panels.table(frame, key="t")


def _run(rows: int) -> AppTest:
    at = AppTest.from_function(_script, args=(rows,)).run()
    assert not at.exception, at.exception
    return at


def test_a_big_table_of_several_units_is_drawn_as_numbers() -> None:
    from app.ui.panels import STYLED_CELLS

    rows = STYLED_CELLS // 5 + 200  # 5 columns: over the limit
    at = _run(rows)
    (el,) = at.dataframe
    assert el.value.size > STYLED_CELLS
    columns = json.loads(el.proto.columns)
    for name in ("AvgValue", "CI95_Lower", "CI95_Upper"):
        assert pd.api.types.is_float_dtype(el.value[name]), (name, el.value[name].dtype)
        assert columns[name]["type_config"]["format"].startswith("%"), columns[name]
    # one format for a value and its CI95 bounds
    assert len({columns[n]["type_config"]["format"]
                for n in ("AvgValue", "CI95_Lower", "CI95_Upper")}) == 1
    assert not el.proto.arrow_data.HasField("styler")
    captions = [c.value for c in at.caption]
    assert not [c for c in captions if "as text" in c], captions
    assert [c for c in captions if "one format for the whole column" in c
            and "full precision" in c], captions
    # the one format keeps every unit's digits: the % rows' four significant digits (a
    # format of the family's gave "%,.0f": 86.5977 % read "87"); and the frame handed to
    # st.dataframe holds the values themselves, which the table's own toolbar CSV writes (each
    # row rounded to its unit's decimals was what it got: a reviewer's find)
    import numpy as np

    assert columns["AvgValue"]["type_config"]["format"] == "%,.2f"
    base = np.array([183_360.0, 1_535_586_414.7, 86.5977, 4_096.0])[np.arange(rows) % 4]
    np.testing.assert_array_equal(el.value["AvgValue"], base * (1 + np.arange(rows) / rows))
    np.testing.assert_array_equal(el.value["CI95_Lower"], base * 0.99)
    np.testing.assert_array_equal(el.value["CI95_Upper"], base * 1.01)
    # sorting reads these values: by value, 183,360 before 1,535,586,415
    ordered = el.value["AvgValue"].sort_values().to_numpy()
    assert ordered[0] < 100 and ordered[-1] > 1e9


def test_a_small_table_of_several_units_keeps_a_format_per_unit() -> None:
    at = _run(40)
    (el,) = at.dataframe
    assert el.proto.arrow_data.HasField("styler")
    assert pd.api.types.is_float_dtype(el.value["AvgValue"])
    import numpy as np

    base = np.array([183_360.0, 1_535_586_414.7, 86.5977, 4_096.0])[np.arange(40) % 4]
    np.testing.assert_array_equal(el.value["CI95_Lower"], base * 0.99)  # not the shown text
    assert not [c.value for c in at.caption]


def test_the_results_per_run_table_hands_over_the_values(  # type: ignore[no-untyped-def]
        store, monkeypatch, app) -> None:
    """The Results page's per-run table of the recorded h200-ncu-matmul-sweep (900 rows of ns,
    %, Hz and byte values: over STYLED_CELLS): the frame handed to st.dataframe, which the
    table's own toolbar CSV writes, holds every number at full precision, each row in the unit
    its Unit cell names (the pages' µs and MHz; the page's Download CSV keeps the bundle's ns
    and Hz): each row rounded to its unit's decimals was what the toolbar CSV got (a
    reviewer's find)."""
    import numpy as np

    from app.core import derived, numbers

    from app.ui.panels import STYLED_CELLS
    from profiling_worker.bundle.schema import columns as C
    from profiling_worker.bundle.loader import load_bundle
    from tests.scenarios import SCENARIOS

    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(SCENARIOS))
    at = app("results", query={"job": "h200-ncu-matmul-sweep"})
    assert not at.exception, at.exception
    stored = load_bundle(SCENARIOS / "h200-ncu-matmul-sweep").table(C.TABLE_RUNS)
    assert stored[C.UNIT].nunique() > 1 and stored.size > STYLED_CELLS
    # each row in the unit the other pages show it in (µs, MHz); the CSV keeps the stored ones
    runs = derived.rows_in_shown_units(stored, columns=numbers.UNIT_VALUE_COLUMNS)
    assert not {"ns", "Hz"} & set(runs[C.UNIT])
    (shown,) = [d.value for d in at.dataframe if len(d.value) == len(runs)
                and C.RUN in d.value.columns]
    for name in runs.select_dtypes("number").columns:
        assert pd.api.types.is_numeric_dtype(shown[name]), (name, shown[name].dtype)
        np.testing.assert_array_equal(shown[name].to_numpy(float), runs[name].to_numpy(float))
