"""Let no one in: the server's network settings, no code through the browser, no path outside
the result store through a URL, a job id or a download, no pickle/eval of uploaded files."""

from __future__ import annotations

import ast
import os
import tomllib
from pathlib import Path

import pytest

from app import cli
from profiling_worker.bundle.loader import list_files
from app.services import result_store
from app.services.result_store import InvalidJobId, check_job_id, find_bundle, job_path
from profiling_worker.bundle.schema.manifest import write_manifest

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "app" / ".streamlit" / "config.toml"
TRAVERSALS = ["../x", "..", ".", "/etc", "/etc/passwd", "a/b", "..%2F..", "x/../../y", "",
              "a\\b", "a\x00b", "~root", " ", "x" * 81, "../../../../etc/passwd"]


# --- network settings -------------------------------------------------------------------------

def test_config_binds_loopback_with_xsrf_cors_and_allowed_hosts() -> None:
    server = tomllib.loads(CONFIG.read_text(encoding="utf-8"))["server"]
    assert server["address"] == "127.0.0.1"
    assert server["enableXsrfProtection"] is True and server["enableCORS"] is True
    assert set(server["allowedHosts"]) <= {"localhost", "127.0.0.1", "::1"}
    assert server["headless"] is True and server["fileWatcherType"] == "none"
    assert 0 < server["maxUploadSize"] <= 2048  # MB: uploads are bounded


def _argv(*args: str) -> list[str]:
    ns, extra = cli.build_parser().parse_known_args(list(args))
    return cli.streamlit_argv(ns, extra)


def _flag(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]


def test_cli_defaults_repeat_the_security_flags() -> None:
    argv = _argv()
    assert _flag(argv, "--server.address") == ["127.0.0.1"]
    assert _flag(argv, "--server.enableXsrfProtection") == ["true"]
    assert _flag(argv, "--server.enableCORS") == ["true"]
    assert set(_flag(argv, "--server.allowedHosts")) == {"localhost", "127.0.0.1", "::1"}
    assert _flag(argv, "--server.fileWatcherType") == ["none"]


def test_cli_exposing_the_server_is_explicit_and_names_the_host() -> None:
    argv = _argv("--host", "10.0.0.5", "--allow-host", "gpu-box.lab")
    assert _flag(argv, "--server.address") == ["10.0.0.5"]
    assert {"10.0.0.5", "gpu-box.lab"} <= set(_flag(argv, "--server.allowedHosts"))
    assert not cli.is_loopback("0.0.0.0") and cli.is_loopback("127.0.0.2")


def test_a_wildcard_host_admits_the_network_url_streamlit_prints() -> None:
    """Issue 41: with --host 0.0.0.0 Streamlit prints a Network URL at the machine's internal
    address, whose WebSocket the Host check then refused (403)."""
    from streamlit import net_util

    address = net_util.get_internal_ip()
    if address is None:
        pytest.skip("this machine has no internal address for Streamlit to print")
    assert address in _flag(_argv("--host", "0.0.0.0"), "--server.allowedHosts")
    assert address not in _flag(_argv(), "--server.allowedHosts")  # loopback: not exposed


# --- no code through the browser --------------------------------------------------------------

def _calls(name: str):
    for path in (REPO / "app").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == name:
                yield path, node


def test_no_uploader_accepts_python_or_pickles() -> None:
    from app.services import import_client

    for path, call in _calls("file_uploader"):
        kw = {k.arg: k for k in call.keywords}
        assert "type" in kw, f"{path}: st.file_uploader without type= accepts any file"
        assert "max_upload_size" in kw or path.name == "import_files.py"
    # The import page's uploader has no browser filter (type=None: .ncu-rep has a hyphen,
    # which the dropzone cannot filter); its names are checked on import instead.
    assert import_client.UPLOAD_TYPES is None
    for ext in ("py", "pyc", "pyw", "pkl", "pickle", "ipynb", "so", "sh", "npy", "pt"):
        with pytest.raises(import_client.UploadRejected):
            import_client.safe_name(f"payload.{ext}")


def test_no_code_editor_and_no_eval_in_the_app_and_importer() -> None:
    roots = [REPO / "app", REPO / "profiling_worker" / "importing"]
    files = [p for r in roots for p in ([r] if r.is_file() else r.rglob("*.py"))]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                assert name not in ("eval", "exec", "read_pickle", "loads_pickle", "text_area_code",
                                    "code_editor"), f"{path}:{node.lineno} calls {name}"
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n and n.split(".")[0] in ("pickle", "dill", "cloudpickle", "marshal")
                               for n in names), f"{path}:{node.lineno} imports a pickle module"


def test_kernel_files_come_only_from_start_up_folders() -> None:
    """User kernels are loaded from KPROF_KERNEL_DIRS (set by `kernel-dashboard --kernels`);
    no page writes into those folders or sets the variable."""
    for path in (REPO / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name in ("cli.py", "settings.py"):
            continue
        assert "KPROF_KERNEL_DIRS" not in text or "environ[" not in text, path


# --- paths: job ids, URLs, downloads ------------------------------------------------------------

@pytest.mark.parametrize("bad", TRAVERSALS)
def test_job_ids_cannot_leave_the_store(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidJobId):
        check_job_id(bad)
    with pytest.raises(InvalidJobId):
        job_path(tmp_path, bad)
    with pytest.raises(InvalidJobId):
        find_bundle(bad, tmp_path, tmp_path)


def test_a_symlinked_job_folder_pointing_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write_manifest(outside, {"job_id": "outside", "status": "done"})
    store = tmp_path / "store"
    store.mkdir()
    (store / "linked").symlink_to(outside)
    with pytest.raises(InvalidJobId):
        job_path(store, "linked")


def test_url_job_parameter_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.ui import state

    class Query(dict):
        pass

    for bad in TRAVERSALS:
        monkeypatch.setattr(state.st, "query_params", Query(job=bad))
        value = state.url_job()  # "." and ".." pass this first filter; job_path refuses them
        if value is not None:
            with pytest.raises(InvalidJobId):
                check_job_id(value)
    monkeypatch.setattr(state.st, "query_params", Query(job="20270101-000000-matmul-ab12"))
    assert state.url_job() == "20270101-000000-matmul-ab12"


def test_bundle_for_refuses_traversal_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.ui import cached

    monkeypatch.setenv("KPROF_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("KPROF_BUNDLED_DIR", str(tmp_path / "bundled"))
    for bad in TRAVERSALS:
        assert cached.bundle_for(bad) is None


def test_downloads_list_no_symlink_or_hidden_file(tmp_path: Path) -> None:
    bundle = tmp_path / "job"
    (bundle / "tables").mkdir(parents=True)
    (bundle / "tables" / "runs.csv").write_text("a\n1\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    (bundle / "tables" / "leak.csv").symlink_to(secret)
    (bundle / "nsight").symlink_to(tmp_path, target_is_directory=True)
    (bundle / ".manifest-abc.tmp").write_text("{}")
    names = [f.relpath for f in list_files(bundle)]
    assert names == ["tables/runs.csv"]
    assert all(".." not in n and not os.path.isabs(n) for n in names)


def test_store_lists_only_plain_named_directories(tmp_path: Path) -> None:
    root = tmp_path / "results"
    root.mkdir()
    for name in ("good-1", ".hidden", "bad name"):
        (root / name).mkdir()
        write_manifest(root / name, {"job_id": name, "status": "done"})
    bundles, problems = result_store.scan_root(root, "local")
    assert [b.job_id for b in bundles] == ["good-1"] and problems == []
