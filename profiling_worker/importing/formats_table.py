"""The table of supported formats in ``docs/importing.md``, written from the registry of import
kinds (:func:`~profiling_worker.importing.kinds.registered`): one row per
:class:`~profiling_worker.importing.kinds.Layout` of each kind, in the registry's order. A new
kind's row is its module's ``layouts``, so the page is never edited by hand for it:

    python -m profiling_worker.importing.formats_table --write docs/importing.md

puts the table between :data:`BEGIN` and :data:`END` (without ``--write`` it is printed);
``tests/unit/profiling_worker/importing/test_import_kinds.py`` fails while the page differs.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from profiling_worker.importing import kinds

BEGIN, END = "<!-- import-formats:begin -->", "<!-- import-formats:end -->"
HEAD = ("| format | kind | versions | recognised by | read as |",
        "| --- | --- | --- | --- | --- |")


def markdown() -> str:
    """The block the page holds from :data:`BEGIN` to :data:`END`, both included.

    Raises:
        ValueError: a cell holding ``|`` or a line break (it would split the Markdown table).
    """
    rows = [
        (layout.format, f"`{kind.name}`", layout.versions, layout.told_by, layout.read_as)
        for kind in kinds.registered() for layout in kind.layouts
    ]
    for row in rows:
        bad = [cell for cell in row if "|" in cell or "\n" in cell]
        if bad:
            raise ValueError(f"import kind {row[1]}: a layout cell holds '|' or a line break: "
                             f"{bad[0]!r} (write it without them)")
    lines = [BEGIN, "", *HEAD, *("| " + " | ".join(row) + " |" for row in rows), "", END]
    return "\n".join(lines)


def in_page(page: str) -> str:
    """``page`` with its block from :data:`BEGIN` to :data:`END` replaced by :func:`markdown`.

    Raises:
        ValueError: the page lacks the markers, or holds them more than once.
    """
    block = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if len(block.findall(page)) != 1:
        raise ValueError(f"the page holds no single {BEGIN} ... {END} block to replace")
    return block.sub(lambda _: markdown(), page)


def main(argv: list[str] | None = None) -> int:
    """Print the block, or write it into the page ``--write`` names; returns the exit status."""
    parser = argparse.ArgumentParser(description="The table of supported import formats.")
    parser.add_argument("--write", type=Path, help="the page to update (docs/importing.md)")
    args = parser.parse_args(argv)
    if args.write is None:
        print(markdown())
    else:
        args.write.write_text(in_page(args.write.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
