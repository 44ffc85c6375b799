"""The one-host Slurm of scripts/local_slurm.sh: its daemons, started as root for the whole test
run, listen on 127.0.0.1 only (never on every interface of the machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slurm
LISTEN = "0A"  # the TCP state LISTEN in /proc/net/tcp (include/net/tcp_states.h)
LOOPBACK = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it (little-endian hex)


def _conf_values(conf: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in conf.read_text(encoding="utf-8").splitlines()
             if "=" in line and not line.lstrip().startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as the kernel writes them) of the TCP sockets listening on
    ``port``, IPv4 and IPv6."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text(encoding="utf-8").splitlines()[1:]:
            fields = line.split()
            address, _, hex_port = fields[1].rpartition(":")
            if fields[3] == LISTEN and int(hex_port, 16) == port:
                found.append(address)
    return found


def test_slurmctld_and_slurmd_listen_on_loopback_only(slurm: str) -> None:
    values = _conf_values(Path(slurm))
    if values.get("ClusterName") != "kprof":
        pytest.skip(f"SLURM_CONF={slurm} is not scripts/local_slurm.sh's cluster")
    for daemon in ("SlurmctldPort", "SlurmdPort"):
        port = int(values[daemon])
        addresses = _listeners(port)
        assert addresses, f"nothing listens on {daemon} {port}"
        assert set(addresses) == {LOOPBACK}, (
            f"{daemon} {port} listens on {addresses}, not 127.0.0.1 only: "
            f"CommunicationParameters=NoCtldInAddrAny,NoInAddrAny in scripts/local_slurm.sh")
