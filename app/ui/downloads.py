"""A bundle download on a page: a link to the download route
(``app/streamlit_patches/download_route.py``: the file streamed from disk, up to 2 GiB) when the
server has it, else ``st.download_button`` with its bytes read on click (held in the server's
memory: 64 MiB at most)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamlit.runtime.scriptrunner import get_script_run_ctx

from app.streamlit_patches import download_route
from app.core import bundle_files
from app.core.download_grants import GRANTS, DownloadKind


def cap() -> int:
    """Most bytes a download may be here: :data:`download_route.MAX_STREAMED_BYTES` when the
    route serves, else ``bundle_files.MAX_DOWNLOAD_BYTES`` (Streamlit holds the bytes)."""
    return (download_route.MAX_STREAMED_BYTES if download_route.serving()
            else bundle_files.MAX_DOWNLOAD_BYTES)


def held_in_memory() -> bool:
    """True where a download is a ``st.download_button`` (no route): its bytes are made on click
    inside Streamlit, so what could fail there is checked before (the Files page's CSVs)."""
    return not download_route.serving()


def inflate_cap() -> int:
    """Most bytes an inflated ``.ncu-rep`` download may be here (as :func:`cap`)."""
    return (download_route.MAX_STREAMED_BYTES if download_route.serving()
            else bundle_files.MAX_INFLATED_BYTES)


def button(where: Any, label: str, *, kind: DownloadKind, bundle_dir: Path, relpath: str,
           filename: str, data: Callable[[], Any], key: str, mime: str, icon: str,
           **kwargs: Any) -> None:
    """One download in ``where`` (a column or ``st``): a link button to a token of this
    session for ``kind`` / ``bundle_dir`` / ``relpath`` when the route serves, else a
    ``st.download_button`` of ``data`` (called on click) named ``filename``. ``kwargs``
    (``help``, ``type``) go to either button."""
    ctx = get_script_run_ctx()
    if download_route.serving() and ctx is not None:
        token = GRANTS.grant(kind, bundle_dir, relpath, filename, ctx.session_id)
        where.link_button(label, download_route.download_url(token), icon=icon, **kwargs)
        return
    where.download_button(label, data=data, file_name=filename, mime=mime, key=key,
                          on_click="ignore", icon=icon, **kwargs)
