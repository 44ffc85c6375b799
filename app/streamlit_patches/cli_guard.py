"""The security options of ``kernel-dashboard`` hold whichever way a Streamlit option arrives.

Streamlit takes an option from a ``--section.option`` flag, a ``STREAMLIT_SECTION_OPTION``
environment variable or a ``config.toml`` (``~/.streamlit/``, ``./.streamlit/``), flags first.
``kernel-dashboard`` passes the listen address and the XSRF / CORS protections as flags, so:

- ``--server.address`` given as a pass-through flag is taken as ``--host`` (same allowed hosts,
  same warning when it is not a loopback address);
- turning XSRF or CORS protection off with a pass-through flag is refused;
- the same options from the environment or a config file lose to the flags: a note says they
  are ignored, so nobody believes them in force.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

ADDRESS = "server.address"
#: Protections kernel-dashboard keeps on: (option, what it guards).
PROTECTIONS = {
    "server.enableXsrfProtection": "XSRF protection guards uploads and the job form",
    "server.enableCORS": "CORS checks the origin of every browser connection",
}
FALSE_WORDS = ("false", "0", "no", "off")


class RefusedOption(ValueError):
    """A pass-through flag that would turn a protection off."""


def env_name(option: str) -> str:
    """Streamlit's environment variable of an option: ``server.enableCORS`` ->
    ``STREAMLIT_SERVER_ENABLE_CORS``."""
    section, name = option.split(".", 1)
    snake = "".join(f"_{c}" if c.isupper() and (i == 0 or not name[i - 1].isupper()) else c
                    for i, c in enumerate(name))
    return f"STREAMLIT_{section}_{snake}".upper()


def take_flag(extra: list[str], option: str) -> str | None:
    """Remove every ``--option VALUE`` / ``--option=VALUE`` from ``extra``; the last value."""
    value, i = None, 0
    while i < len(extra):
        arg = extra[i]
        if arg == f"--{option}" and i + 1 < len(extra):
            value = extra[i + 1]
            del extra[i:i + 2]
        elif arg.startswith(f"--{option}="):
            value = arg.split("=", 1)[1]
            del extra[i]
        else:
            i += 1
    return value


def refuse_unprotected(extra: Sequence[str]) -> None:
    """Raise :class:`RefusedOption` when a pass-through flag turns XSRF or CORS off."""
    flags = list(extra)
    for option, why in PROTECTIONS.items():
        value = take_flag(flags, option)
        if value is not None and value.strip().lower() in FALSE_WORDS:
            raise RefusedOption(f"--{option} {value}: refused; {why}. To share the dashboard, "
                                "put it behind a reverse proxy with authentication "
                                "(docs/security.md)")


def _config_files(cwd: Path, home: Path) -> list[Path]:
    return [p for p in (home / ".streamlit" / "config.toml", cwd / ".streamlit" / "config.toml")
            if p.is_file()]


def _from_config(path: Path, option: str) -> object | None:
    section, name = option.split(".", 1)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return (data.get(section) or {}).get(name)


def ignored_settings(env: Mapping[str, str], cwd: Path, home: Path) -> list[str]:
    """Notes for the address and protection settings that the environment or a config file
    holds but the flags of kernel-dashboard override (they are not in force)."""
    notes = []
    for option in (ADDRESS, *PROTECTIONS):
        sources: list[tuple[str, object]] = [(env_name(option), env.get(env_name(option)))]
        sources += [(str(p), _from_config(p, option)) for p in _config_files(cwd, home)]
        for where, value in sources:
            if value is None:
                continue
            keeps = "--host (127.0.0.1 unless given)" if option == ADDRESS else "on"
            notes.append(f"{option} = {value!s} from {where} is ignored: kernel-dashboard keeps "
                         f"{option} {keeps}")
    return notes


def default_sources() -> tuple[Mapping[str, str], Path, Path]:
    """The environment, working directory and home directory Streamlit reads settings from."""
    return os.environ, Path.cwd(), Path.home()
