"""Environment page: the backends this machine can run (and fixes), and the job's manifest."""

from __future__ import annotations

from apptest_helpers import open_folds, texts


def test_backends_and_fixes(seeded, app) -> None:
    at = app("environment")
    assert not at.exception
    backends = at.dataframe[0].value.set_index("Backend")
    assert backends.loc["cpu", "Can run"]
    if not backends.loc["ncu", "Can run"]:  # no GPU here: one warning names them, the table
        blocked = [b for b, ok in backends["Can run"].items() if not ok]  # says why (once)
        warnings = [w.value for w in at.warning if w.value.startswith("Cannot run here")]
        assert len(warnings) == len({backends.loc[b, "Fix"] for b in blocked})
        for b in blocked:  # each named once, with its fix; its reason stays in the table
            (warning,) = [w for w in warnings if f"**{b}**" in w]
            assert backends.loc[b, "Fix"] in warning and backends.loc[b, "Reason"] not in warning
    assert any("host wall-clock" in str(j.value) for j in open_folds(at).json)
    # this machine's table names what it can run (it read "Backend none" without a GPU)
    here = at.dataframe[1].value.set_index("Item")["Value"]
    can_run = [b for b, ok in backends["Can run"].items() if ok]
    assert here["Backends it can run"] == ", ".join(can_run) and "Backend" not in here


def test_missing_worker_python(store, app, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("KPROF_WORKER_PYTHON", str(tmp_path / "no-python"))
    at = app("environment")
    assert not at.exception
    assert "not found" in texts(at) and "KPROF_WORKER_PYTHON" in texts(at)


def test_probe_again_button_reprobes_cleanly(store, app) -> None:
    at = app("environment")
    assert at.dataframe[0].value.set_index("Backend").loc["cpu", "Can run"]
    at.button(key="environment-reprobe").click().run()
    assert not at.exception
    assert at.dataframe[0].value.set_index("Backend").loc["cpu", "Can run"]
