"""Profiling worker: runs nsight-python (or the host-timer backend) and writes a result bundle.

Nothing in this package imports Streamlit. The app talks to it only through
``python -m profiling_worker`` and the files described in :mod:`profiling_worker.bundle.schema`.
"""

__version__ = "0.1.0"
