"""Readers of an import kind of their own, one module each, found by
:func:`profiling_worker.importing.kinds.registered` (nothing else lists them).

A module here declares ``KIND = ImportKind(name, words, supported=..., columns=... or magic=...
or lines=..., read=<its reader>)``: how :mod:`..sniff` tells the kind, its line of the supported
formats, and ``read`` (the files of this kind -> a :class:`~profiling_worker.importing.job.Job`),
which :mod:`..assemble` calls on an import of such files alone. Add its row to the table of
``docs/importing.md`` and a recorded file of the kind under ``tests/fixtures/import_cases``
(``test_import_kinds.py`` asks for both).
"""
