"""kernel-dashboard keeps its listen address and XSRF/CORS protection whichever way a Streamlit
option arrives: pass-through flag, STREAMLIT_* variable or config.toml."""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from app import cli
from app.streamlit_patches import cli_guard
from app.services import import_client
from app.ui import prefetch
from profiling_worker.bundle.schema.manifest import read_manifest, write_manifest


def _parse(*args: str):
    return cli.parse(list(args), cli.build_parser())


def _flag(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]


@pytest.mark.parametrize("args", [("--server.address", "0.0.0.0"), ("--server.address=0.0.0.0",)])
def test_server_address_flag_is_taken_as_host_with_the_same_warning(args) -> None:
    ns, extra = _parse(*args)
    assert ns.host == "0.0.0.0" and extra == []
    argv = cli.streamlit_argv(ns, extra)
    assert _flag(argv, "--server.address") == ["0.0.0.0"]  # once: no later flag undoes it
    assert "anyone who can reach port" in cli.exposure_warning(ns)
    assert cli.exposure_warning(_parse()[0]) is None


def test_host_and_a_different_server_address_are_refused(capsys) -> None:
    with pytest.raises(SystemExit):
        _parse("--host", "10.0.0.5", "--server.address", "0.0.0.0")
    assert "give one of them" in capsys.readouterr().err


@pytest.mark.parametrize("args", [("--server.enableXsrfProtection", "false"),
                                  ("--server.enableXsrfProtection=False",),
                                  ("--server.enableCORS", "0")])
def test_turning_a_protection_off_is_refused(args, capsys) -> None:
    with pytest.raises(SystemExit):
        _parse(*args)
    assert "refused" in capsys.readouterr().err


def test_protection_left_on_passes() -> None:
    ns, extra = _parse("--server.enableXsrfProtection", "true", "--theme.base", "dark")
    assert extra == ["--server.enableXsrfProtection", "true", "--theme.base", "dark"]


def test_environment_and_config_settings_are_named_as_ignored(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    (home / ".streamlit").mkdir(parents=True)
    (cwd / ".streamlit").mkdir(parents=True)
    (home / ".streamlit" / "config.toml").write_text('[server]\naddress = "0.0.0.0"\n')
    (cwd / ".streamlit" / "config.toml").write_text("[server]\nenableXsrfProtection = false\n")
    env = {"STREAMLIT_SERVER_ENABLE_CORS": "false", "STREAMLIT_SERVER_ADDRESS": "::"}
    notes = cli_guard.ignored_settings(env, cwd, home)
    joined = "\n".join(notes)
    assert len(notes) == 4
    assert "STREAMLIT_SERVER_ADDRESS" in joined and "STREAMLIT_SERVER_ENABLE_CORS" in joined
    assert str(home / ".streamlit" / "config.toml") in joined
    assert "enableXsrfProtection = False" in joined and "is ignored" in joined
    # and they are ignored: the flags of kernel-dashboard come after nothing that undoes them
    argv = cli.streamlit_argv(*_parse())
    assert _flag(argv, "--server.enableXsrfProtection") == ["true"]
    assert _flag(argv, "--server.address") == ["127.0.0.1"]
    assert cli_guard.ignored_settings({}, tmp_path / "none", tmp_path / "none") == []


def test_uploads_are_capped_by_the_server_at_the_import_limit() -> None:
    import tomllib

    assert cli.MAX_UPLOAD_MB == import_client.MAX_UPLOAD_MB
    assert _flag(cli.streamlit_argv(*_parse()), "--server.maxUploadSize") == \
        [str(import_client.MAX_UPLOAD_MB)]
    config = Path(cli.__file__).with_name(".streamlit") / "config.toml"
    server = tomllib.loads(config.read_text(encoding="utf-8"))["server"]
    assert server["maxUploadSize"] == import_client.MAX_UPLOAD_MB


def test_recovery_runs_at_server_start(tmp_path: Path, monkeypatch) -> None:
    """kernel-dashboard marks a dead server's job interrupted before Streamlit starts, without
    waiting for a browser to open a page."""
    job = tmp_path / "20261129-230000-matmul-dead"
    job.mkdir()
    write_manifest(job, {"job_id": job.name, "status": "running",
                         "server": {"pid": 2**22 + 7, "host": os.uname().nodename}})
    monkeypatch.setenv("KPROF_RESULTS_DIR", str(tmp_path))
    started = []
    monkeypatch.setattr("streamlit.web.cli.main", lambda: started.append(
        read_manifest(job)["status"]))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(prefetch, "_enabled", threading.Event())  # on for this server only
    cli.main(["--results", str(tmp_path)])
    assert started == ["interrupted"]  # already marked when the server started


def _listening() -> tuple[socket.socket, int]:
    """A socket listening on a free loopback port (what a running dashboard holds)."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    return held, held.getsockname()[1]


def test_a_taken_default_port_moves_to_the_next_free_one(monkeypatch, capsys) -> None:
    """Issue 37: a second kernel-dashboard (e.g. --compare beside a running one) ended with
    Streamlit's 'Port 8501 is already in use' and exit 1; the default now moves on, said."""
    held, port = _listening()
    with held:
        assert cli.port_taken("127.0.0.1", port)
        monkeypatch.setattr(cli, "DEFAULT_PORT", port)
        ns, extra = _parse()
        assert not ns.port_given and ns.port == port
        chosen = cli.usable_port(ns.host, ns.port, ns.port_given, cli.build_parser())
        assert chosen > port and not cli.port_taken("127.0.0.1", chosen)
        assert f"port {port} is in use" in capsys.readouterr().err
        assert _flag(cli.streamlit_argv(ns, extra), "--server.port") == [str(port)]


def test_a_taken_port_given_on_purpose_is_refused_saying_what_to_do(capsys) -> None:
    held, port = _listening()
    with held:
        ns, _extra = _parse("--port", str(port))
        assert ns.port_given
        with pytest.raises(SystemExit) as ended:
            cli.usable_port(ns.host, ns.port, ns.port_given, cli.build_parser())
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert f"--port {port}: another server" in err and "give a free port, e.g. --port" in err


@pytest.mark.parametrize("given", ["8_501", "８５０１"])
def test_a_port_int_reads_silently_is_refused_naming_the_option_and_the_port(
        given: str, capsys) -> None:  # type: ignore[no-untyped-def]
    """``--port 8_501`` was read as 8501 by int(): the forms' one check of typed numbers
    (``config_grid.digits_problem``) refuses it, argparse naming the option."""
    from app.core.config_grid import digits_problem

    with pytest.raises(SystemExit) as ended:
        _parse("--port", given)
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "--port" in err and str(digits_problem(given)) in err and "type 8501" in err


@pytest.mark.parametrize("given", ["0", "65536", "http", "1e3"])
def test_a_port_outside_1_to_65535_is_refused_with_the_range(given: str, capsys) -> None:
    with pytest.raises(SystemExit):
        _parse("--port", given)
    err = capsys.readouterr().err
    assert "--port" in err and "from 1 to 65535" in err and f"e.g. {cli.DEFAULT_PORT}" in err


def test_a_port_of_digits_is_taken() -> None:
    assert _parse("--port", "8600")[0].port == 8600
