"""Job-spec and result-bundle schema shared by the worker and the app (stdlib only)."""
