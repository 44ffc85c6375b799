"""The app's patches of Streamlit internals (see this package's docstring)."""
