"""The Streamlit internals the app's patches replace or wrap (app/streamlit_patches/) exist in
the installed Streamlit: a Streamlit upgrade that renames one fails here, naming it, instead of
the patch quietly falling back to the stock behaviour."""

from __future__ import annotations

import importlib

import pytest

#: (module, attribute) the patches of app/streamlit_patches/ replace, wrap or call.
PATCHED = [
    ("streamlit.web.server.starlette.starlette_websocket", "is_url_from_allowed_origins"),
    ("streamlit.web.server.starlette.starlette_websocket", "is_host_allowed"),
    ("streamlit.net_util", "get_external_ip"),
    ("streamlit.runtime.memory_uploaded_file_manager", "MemoryUploadedFileManager.add_file"),
    ("streamlit.web.server.starlette.starlette_app", "create_streamlit_routes"),
    ("streamlit.web.server.starlette.starlette_app", "create_streamlit_middleware"),
    ("streamlit.web.server.starlette.starlette_gzip_middleware", "_should_bypass_gzip"),
    # app/ui/navigation.quiet_unknown_path: an unknown URL path left out of the run's intent
    ("streamlit.runtime.pages_manager", "PagesManager.set_script_intent"),
    # app/streamlit_patches/styler_memo: a prepared table's Styler marshalled once per place
    ("streamlit.elements.arrow", "marshall_styler"),
]


@pytest.mark.parametrize("module, name", PATCHED)
def test_each_patched_streamlit_name_exists(module: str, name: str) -> None:
    target: object = importlib.import_module(module)
    for part in name.split("."):
        assert hasattr(target, part), f"{module}.{name} is gone: re-check app/streamlit_patches"
        target = getattr(target, part)
    assert callable(target)
