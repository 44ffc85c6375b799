"""The gate's JUnit XML document (stdlib only: a usage error writes one before the judgement's
pandas is imported). What goes in it: :mod:`profiling_worker.bundle.gate.report`.

Structure as Jenkins' ``junit-10.xsd`` (xunit-plugin; a copy in tests/fixtures/junit) has it:
one ``<testsuite>`` (name, tests, failures, errors, skipped) with optional ``<properties>``
(``<property name value>``, before the cases) and ``<testcase>`` elements, each
with at most one ``<failure>`` or ``<error>`` (its ``type`` and ``message`` attributes, and the
same message with the figures as its text) and a ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

SUITE_NAME = "kernel regression gate"


class Case(NamedTuple):
    """One testcase. ``tag``: ``"failure"``, ``"error"`` or None (passed); ``kind``: the
    element's type (the gate's outcome); ``details``: figures after the message."""

    classname: str
    name: str
    tag: str | None
    kind: str
    message: str
    details: str = ""


def document(cases: list[Case], properties: dict[str, str] | None = None) -> str:
    """The JUnit XML document of ``cases`` (suite counts from their tags), with the suite's
    ``properties`` (name -> value) first where given."""
    tags = [c.tag for c in cases]
    suite = ET.Element("testsuite", name=SUITE_NAME, tests=str(len(cases)),
                       failures=str(tags.count("failure")), errors=str(tags.count("error")),
                       skipped="0")
    if properties:
        held = ET.SubElement(suite, "properties")
        for name, value in properties.items():
            ET.SubElement(held, "property", name=name, value=value)
    for c in cases:
        case = ET.SubElement(suite, "testcase", classname=c.classname, name=c.name)
        text = f"{c.kind}: {c.message}" + (f"\n{c.details}" if c.details else "")
        if c.tag is not None:
            ET.SubElement(case, c.tag, message=f"{c.kind}: {c.message}", type=c.kind).text = text
        ET.SubElement(case, "system-out").text = text
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def error_document(message: str, kind: str = "bad input") -> str:
    """A document of one ``<error>`` case, ``gate`` / ``compare``: the gate judged nothing."""
    return document([Case("gate", "compare", "error", kind, message)])


def write_error(path: Path | None, message: str) -> str | None:
    """Write :func:`error_document` to ``path`` (None: nothing asked); returns why it could
    not be written, else None."""
    if path is None:
        return None
    try:
        path.write_text(error_document(message), encoding="utf-8")
    except OSError as exc:
        return f"cannot write the JUnit file ({exc})"
    return None
