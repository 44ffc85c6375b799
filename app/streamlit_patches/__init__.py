"""Every change the app makes to Streamlit's own server, in one room. Each one replaces or wraps
a Streamlit internal by name; checked against Streamlit 1.67.0 (the version installed when they
were gathered here; pyproject allows >=1.61,<2). tests/unit/test_streamlit_patches.py checks
that each name still exists in the installed Streamlit, and tests/unit/test_boundaries.py that
no module outside this package (but the launcher, ``app/cli.py``) reaches into
``streamlit.web`` or ``streamlit.runtime`` beyond the script-run context.

- :mod:`.server_guard` (issue 26): the WebSocket admits a cross-origin handshake only from the
  dashboard's own host AND port (Streamlit compares host names only:
  ``starlette_websocket.is_url_from_allowed_origins`` replaced); the machine's external IP is
  never looked up on the internet (``net_util.get_external_ip`` replaced); one browser
  session's uploads are capped in total (``MemoryUploadedFileManager.add_file`` wrapped:
  Streamlit caps each file only). Installed by ``kernel-dashboard`` before the server starts
  and by ``app/streamlit_app.py`` under a plain ``streamlit run``.
- :mod:`.download_route` (issue 26, design-notes "Downloads stream from disk"):
  ``GET /_kprof/download/<token>`` streams a bundle file from disk instead of
  ``st.download_button``'s bytes held in memory (``starlette_app.create_streamlit_routes``
  wrapped; the route exempted in ``starlette_gzip_middleware._should_bypass_gzip``).
  ``kernel-dashboard`` only.
- :mod:`.page_shell` (issue 25): Streamlit's own ``index.html`` served with the plotly chunk
  imported from the ``<head>``, so the first chart is drawn as soon as its message arrives,
  and a page navigation to a nested unknown path (``/compare/extra``: a blank page, its
  relative script URLs answered with HTML) redirected to that path as one segment, where the
  app's banner names it (``starlette_app.create_streamlit_middleware`` wrapped).
  ``kernel-dashboard`` only.
- :mod:`.styler_memo` (issue 40): a table's pandas Styler that ``app.ui.panels`` prepared is
  marshalled once per place, later draws copy that proto part (``arrow.marshall_styler``
  wrapped; every other Styler as before). Installed by ``app/streamlit_app.py``.
- :mod:`.cli_guard`: the listen address and the XSRF / CORS protections hold whichever way a
  Streamlit option arrives (flag, ``STREAMLIT_*`` variable, ``config.toml``); it patches
  nothing but reads Streamlit's option names and config files, so it lives here.

A Streamlit without one of these names gets the stock behaviour (each ``install`` says what).

Outside this package, one script run's own state is changed through the script-run context:
:func:`app.ui.navigation.quiet_unknown_path` clears the intent of a run asked for by an
unknown URL path (``PagesManager.set_script_intent``, also checked by
tests/unit/test_streamlit_patches.py), so that Streamlit's "Page not found" modal is not
drawn over the app's own banner.
"""
