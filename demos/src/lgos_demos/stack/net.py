"""Loopback addresses and ports, shared by the stack's modules."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def reachable(host: str) -> str:
    """Where to probe a server bound to ``host`` (wildcards mean loopback)."""
    return LOOPBACK if host in ("0.0.0.0", "::", "") else host


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (held together while choosing)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOOPBACK, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((reachable(host), port)) == 0
