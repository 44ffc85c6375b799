"""``kernel-dashboard``: start the dashboard the way ``streamlit hello`` starts its demo.

The console script builds a ``streamlit run <installed app/streamlit_app.py> ...`` command line
and hands it to ``streamlit.web.cli.main`` (the function behind Streamlit's own ``streamlit``
script), so config files, flags and the server start exactly as with ``streamlit run``.

Settings for the app travel as environment variables, read by the app at start-up:

- ``KPROF_RESULTS_DIR``: the result store (one directory per job).
- ``KPROF_WORKER_PYTHON``: the interpreter that runs ``-m profiling_worker`` (the GPU
  environment is often not the dashboard's).
- ``KPROF_KERNEL_DIRS``: directories of user kernel files, joined with ``os.pathsep``.

The server listens on 127.0.0.1 unless ``--host`` says otherwise; the dashboard starts
processes on this machine, so exposing it to a network must be an explicit choice.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from app.streamlit_patches import cli_guard

ENV_RESULTS_DIR = "KPROF_RESULTS_DIR"
ENV_WORKER_PYTHON = "KPROF_WORKER_PYTHON"
ENV_KERNEL_DIRS = "KPROF_KERNEL_DIRS"

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8501
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
MAX_UPLOAD_MB = 200  # = app.services.import_client.MAX_UPLOAD_MB (a test checks); no import here


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kernel-profiling-dashboard")
    except Exception:  # not installed (run from a source tree)
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``kernel-dashboard`` (also used by ``--help``)."""
    p = argparse.ArgumentParser(
        prog="kernel-dashboard",
        description="GPU kernel profiling dashboard (Streamlit on top of nsight-python).",
        epilog=(
            "Other Streamlit options can follow as --section.option VALUE "
            "(for example --theme.base dark); they are passed to `streamlit run` unchanged."
        ),
    )
    p.add_argument("--results", metavar="DIR", type=Path,
                   help=f"result store directory (sets {ENV_RESULTS_DIR}); created if missing")
    p.add_argument("--worker-python", metavar="PATH",
                   help=f"Python interpreter of the GPU environment that runs the worker "
                        f"(sets {ENV_WORKER_PYTHON}; default: the app's own interpreter)")
    p.add_argument("--kernels", metavar="DIR", type=Path, action="append", default=[],
                   help=f"directory of user kernel files; repeat for several (sets "
                        f"{ENV_KERNEL_DIRS})")
    p.add_argument("--port", type=_port, default=None,
                   help=f"TCP port (default {DEFAULT_PORT}, or the next free one when another "
                        "server holds it; a port given here that is taken is refused)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help="address to listen on (default 127.0.0.1). Anything else exposes a "
                        "dashboard "
                        "that starts processes on this machine to the network: give it on purpose")
    p.add_argument("--allow-host", metavar="NAME", action="append", default=[],
                   help="extra host name browsers may use to reach the server "
                        "(server.allowedHosts; "
                        "needed behind a proxy or when --host exposes it); repeat for several")
    p.add_argument("--dev", action="store_true", help="watch the source files and rerun on save")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BASE", "CANDIDATE"),
                   help="open the compare page on two bundle directories side by side (the "
                        "regression gate's judgement); bundles outside the result store are "
                        "copied into it")
    p.add_argument("--report", nargs="+", type=Path, metavar="BUNDLE",
                   help="write the self-contained HTML report of one bundle directory (a job) "
                        "or of two (BASE CANDIDATE: a comparison with the regression gate's "
                        "verdict) to --out, and exit without starting the server")
    p.add_argument("--out", type=Path, metavar="FILE", help="the --report file to write")
    p.add_argument("--max-slowdown", type=_percent, default=3.0, metavar="PCT",
                   help="the gate's allowed slowdown for a --report of two bundles (default 3%%)")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    return p


def _port(text: str) -> int:
    """``--port``'s TCP port, 1 to 65535, typed with the digits 0-9 alone.

    Raises:
        argparse.ArgumentTypeError: anything else, with the port to type (argparse prints it
            after ``--port``): int() read ``8_501`` and ``８５０１`` silently as 8501
            (:func:`~app.core.config_grid.digits_problem`, the forms' one check).
    """
    from app.core.config_grid import digits_problem

    problem = digits_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number: type a whole number "
                                         f"from 1 to 65535, e.g. {DEFAULT_PORT}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number: type one from 1 to "
                                         f"65535, e.g. {DEFAULT_PORT}")
    return port


def _percent(text: str) -> float:
    from profiling_worker.bundle.gate.command import percent  # the gate's own parsing and messages

    return percent(text)


def write_report(ns: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """``--report``: write the HTML report to ``--out``; 0 when written."""
    from app import settings
    from app.services.result_store import zip_reason
    from app.services.share_report import write_report as write
    from profiling_worker.importing.sniff import is_bundle_zip
    from profiling_worker.bundle.schema.manifest import ManifestError

    if ns.out is None:
        parser.error("--report needs --out FILE (the HTML file to write)")
    if len(ns.report) > 2:
        parser.error("--report takes one bundle (a job) or two (BASE CANDIDATE)")
    for given in ns.report:  # the Files page's download: said as the result store says it
        if is_bundle_zip(given):
            parser.error(f"--report {given}: " + zip_reason(
                given, settings.results_dir(), "--report reads job folders")
                + ", then give its folder")
    try:
        size = write(ns.report, ns.out, ns.max_slowdown, settings.worker_python(),
                     settings.worker_env())
    except (ManifestError, OSError) as exc:
        parser.error(f"--report: {exc}")
    print(f"kernel-dashboard: wrote {ns.out} ({size:,} bytes)", file=sys.stderr)
    return 0


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, extra: Sequence[str]) -> list[str]:
    """Host names accepted in the Host header (DNS-rebinding protection)."""
    names = list(LOOPBACK_NAMES)
    if not is_loopback(host):
        if host in ("0.0.0.0", "::"):
            from streamlit import net_util

            # and the address of the "Network URL" Streamlit prints for a wildcard host (its
            # own lookup, no network): without it that URL's WebSocket was refused (403)
            names += [socket.gethostname(), socket.getfqdn(), net_util.get_internal_ip() or ""]
        else:
            names.append(host)
    names += list(extra)
    return list(dict.fromkeys(n for n in names if n))


def app_script() -> Path:
    """The installed ``app/streamlit_app.py`` (a real file beside this module)."""
    return Path(__file__).resolve().with_name("streamlit_app.py")


def environment(ns: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, str]:
    """The ``KPROF_*`` variables for the options given; checks paths first."""
    env: dict[str, str] = {}
    if ns.results is not None:
        results = ns.results.expanduser().resolve()
        try:
            results.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            parser.error(f"--results {ns.results}: cannot create it ({exc})")
        env[ENV_RESULTS_DIR] = str(results)
    if ns.worker_python is not None:
        exe = Path(ns.worker_python).expanduser()
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            parser.error(f"--worker-python {ns.worker_python}: not an executable file "
                         "(give the python of the GPU environment, e.g. /opt/gpu-venv/bin/python)")
        env[ENV_WORKER_PYTHON] = str(exe.absolute())
    if ns.kernels:
        missing = [str(d) for d in ns.kernels if not d.expanduser().is_dir()]
        if missing:
            parser.error(f"--kernels: not a directory: {', '.join(missing)}")
        env[ENV_KERNEL_DIRS] = os.pathsep.join(str(d.expanduser().resolve()) for d in ns.kernels)
    return env


def streamlit_argv(ns: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    """The ``streamlit run`` command line; ``extra`` flags come last, so they win."""
    argv = [
        "streamlit", "run", str(app_script()),
        "--server.address", ns.host,
        "--server.port", str(ns.port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.enableXsrfProtection", "true",
        "--server.enableCORS", "true",
        "--server.maxUploadSize", str(MAX_UPLOAD_MB),  # refused by the server, not the browser
        "--server.fileWatcherType", "auto" if ns.dev else "none",
        "--server.runOnSave", "true" if ns.dev else "false",
    ]
    for name in allowed_hosts(ns.host, ns.allow_host):
        argv += ["--server.allowedHosts", name]
    return argv + list(extra)


def _check_extra(extra: Sequence[str], parser: argparse.ArgumentParser) -> None:
    flags = [a for a in extra if a.startswith("-")]
    bad = [a for a in flags if not (a.startswith("--") and "." in a.split("=", 1)[0])]
    if bad:
        parser.error(f"unrecognized arguments: {' '.join(bad)}")


def parse(argv: Sequence[str] | None, parser: argparse.ArgumentParser
          ) -> tuple[argparse.Namespace, list[str]]:
    """The options and the pass-through flags, with the security options checked however they
    arrive (app/streamlit_patches/cli_guard.py): ``--server.address`` becomes ``--host``; XSRF
    or CORS turned off is refused (``parser.error``)."""
    ns, extra = parser.parse_known_args(argv)
    ns.port_given = ns.port is not None  # a taken default moves on; a given port is refused
    ns.port = DEFAULT_PORT if ns.port is None else ns.port
    _check_extra(extra, parser)
    try:
        cli_guard.refuse_unprotected(extra)
    except cli_guard.RefusedOption as exc:
        parser.error(str(exc))
    address = cli_guard.take_flag(extra, cli_guard.ADDRESS)
    if address is not None:
        if ns.host not in (DEFAULT_HOST, address):
            parser.error(f"--host {ns.host} and --server.address {address}: give one of them")
        ns.host = address
    return ns, extra


def exposure_warning(ns: argparse.Namespace) -> str | None:
    """The warning for a listen address other than loopback (None for loopback)."""
    if is_loopback(ns.host):
        return None
    return (f"kernel-dashboard: listening on {ns.host}: anyone who can reach port {ns.port} can "
            "start profiling jobs on this machine, and any browser session can cancel any job. "
            "Publish it only to networks you trust, behind an authenticating proxy "
            "(docs/security.md).")


def recover_jobs() -> list[str]:
    """Restart recovery at server start (not at the first page load): jobs a gone server left
    queued or running end ``interrupted`` and their orphaned workers are killed."""
    from app import settings
    from app.services.job_recovery import mark_interrupted

    return mark_interrupted(settings.results_dir())


def open_compare(ns: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """Put the two ``--compare`` bundles where the dashboard lists them; their page's URL."""
    from app import settings
    from app.services.compare_intake import CompareIntakeError, compare_url, into_store

    try:
        ids = [into_store(b, settings.results_dir(), settings.bundled_dir()) for b in ns.compare]
    except (CompareIntakeError, OSError) as exc:
        parser.error(str(exc))
    return compare_url(ns.host, ns.port, ids[0], ids[1])


#: How many ports after the default are tried when it is taken.
PORTS_TRIED = 100


def port_taken(host: str, port: int) -> bool:
    """True when a server already listens on ``port`` of ``host`` (a trial bind fails). The
    trial socket sets SO_REUSEADDR as Tornado's listening socket does, so a connection of an
    ended server (TIME_WAIT) does not count as taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError:
        return False  # an address that does not resolve: Streamlit names it
    for family, kind, proto, _name, address in infos:
        with socket.socket(family, kind, proto) as trial:
            trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                trial.bind(address)
            except OSError:
                return True
    return False


def usable_port(host: str, port: int, asked: bool, parser: argparse.ArgumentParser) -> int:
    """``port`` when it is free. Taken: the next free one after the default (said on stderr),
    or, for a ``--port`` the user gave, ``parser.error`` saying what to do (Streamlit itself
    only printed "Port 8501 is already in use" and exited 1; issue 37: a second
    ``kernel-dashboard --compare`` beside a running dashboard)."""
    if not port_taken(host, port):
        return port
    free = next((p for p in range(port + 1, min(port + PORTS_TRIED, 65535) + 1)
                 if not port_taken(host, p)), None)
    if asked or free is None:
        parser.error(f"--port {port}: another server (a kernel-dashboard already running?) "
                     f"listens on {host}:{port}. Open that one, stop it, or give a free port"
                     + (f", e.g. --port {free}" if free is not None else "") + ".")
    print(f"kernel-dashboard: port {port} is in use (a kernel-dashboard already running?); "
          f"using {free}", file=sys.stderr)
    return free


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, set the ``KPROF_*`` variables and run Streamlit (does not return)."""
    parser = build_parser()
    ns, extra = parse(argv, parser)
    if ns.report:
        os.environ.update(environment(ns, parser))  # --worker-python reads the reports
        return write_report(ns, parser)
    if not 1 <= ns.port <= 65535:
        parser.error(f"--port {ns.port}: give a TCP port between 1 and 65535")
    ns.port = usable_port(ns.host, ns.port, ns.port_given, parser)
    script = app_script()
    if not script.is_file():
        parser.error(f"the app's entry script is missing: {script} (reinstall the package)")
    os.environ.update(environment(ns, parser))
    for note in [exposure_warning(ns), *cli_guard.ignored_settings(*cli_guard.default_sources())]:
        if note:
            print(note if note.startswith("kernel-dashboard") else f"kernel-dashboard: {note}",
                  file=sys.stderr)
    from profiling_worker.bundle.inflate import sweep_scratch

    sweep_scratch()  # uploads and inflated reports a killed server or worker left
    recovered = recover_jobs()
    if recovered:  # rare: only then pay the import of pandas that numbers makes
        from app.core import numbers

        print(f"kernel-dashboard: marked {numbers.counted(len(recovered), 'job')} of a stopped "
              f"server interrupted: "
              f"{', '.join(recovered)}", file=sys.stderr)
    if ns.compare:
        print(f"kernel-dashboard: compare at {open_compare(ns, parser)}", file=sys.stderr)
    sys.argv = streamlit_argv(ns, extra)
    from streamlit.web import cli as stcli  # first: Streamlit's import must not race the thread

    from app import settings
    from app.ui import prefetch, prewarm

    prewarm.start(settings.worker_python())  # overlaps the browser's loading (issue 25)
    prefetch.enable()  # after a page's run, the bar's likely next charts (issue 40)

    from app.streamlit_patches import server_guard

    server_guard.install()  # before the server starts: the first handshake is checked too
    from app.streamlit_patches import download_route

    download_route.install()  # the streamed download route, built with the server
    from app.streamlit_patches import page_shell

    page_shell.install()  # the first chart's plotly chunk loaded from the page's <head>
    stcli.main()  # click: runs the server, then raises SystemExit
    return 0


if __name__ == "__main__":
    sys.exit(main())
