"""Readers of an import kind of their own, one module each, found by
:func:`profiling_worker.importing.kinds.registered` (nothing else lists them).

A module here declares ``KIND = ImportKind(name, words, supported=..., columns=... or magic=...
or lines=..., read=<its reader>, layouts=(Layout(format, versions, told_by, read_as), ...))``:
how :mod:`..sniff` tells the kind, its line of the supported formats, ``read`` (the files of this
kind -> a :class:`~profiling_worker.importing.job.Job`), which :mod:`..assemble` calls on an
import of such files alone, and its rows of ``docs/importing.md``'s table, which
``python -m profiling_worker.importing.formats_table --write docs/importing.md`` writes there. Its
docstring says where its recorded file came from; the file goes under
``tests/fixtures/import_cases`` (``test_import_kinds.py`` asks that every kind be told from one).
"""
