"""Loopback addresses, free ports and polling until something holds.

The one home of these helpers: the stack, the test kit, the browser suite,
the benchmarks and the core's tests all use them.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

LOOPBACK = "127.0.0.1"
STARTUP_SECONDS = 120.0
"""How long a real process may take to start. Generous: on a CI machine
whose cores are busy a start takes several times longer than on a quiet one,
and the bound only matters when something is broken."""


def reachable(host: str) -> str:
    """Where to probe a server bound to ``host`` (wildcards mean loopback)."""
    return LOOPBACK if host in ("0.0.0.0", "::", "") else host


LISTEN_PORTS = range(10000, 32768)
"""Where ``free_ports`` chooses, below Linux's default ephemeral range."""
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports, for servers to listen on.

    They are chosen at random outside the kernel's ephemeral range: a
    connection anyone opens takes its local port from that range, so a port
    chosen there (as binding port 0 does) can be taken by any client in the
    moment before the server binds it. The sockets are held open together
    while choosing, so the ports differ; another process may still bind one
    first, but it is no longer a matter of chance connections.
    """
    if count < 1:
        raise ValueError(f"free_ports: count must be at least 1, got {count}")
    low, high = ephemeral_range()
    outside = [port for port in LISTEN_PORTS if not low <= port <= high]
    candidates = outside or list(LISTEN_PORTS)
    random.shuffle(candidates)
    sockets: list[socket.socket] = []
    try:
        for port in candidates:
            if len(sockets) == count:
                break
            sock = socket.socket()
            try:
                sock.bind((LOOPBACK, port))
            except OSError:
                sock.close()
                continue
            sockets.append(sock)
        if len(sockets) < count:
            raise OSError(f"free_ports: fewer than {count} free listening ports")
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range of local ports for outgoing connections (Linux's
    default when it cannot be read)."""
    try:
        low, high = _EPHEMERAL_RANGE.read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """One free loopback port."""
    return free_ports(1)[0]


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    """Whether something accepts connections on ``port`` now."""
    with socket.socket() as probe:
        return probe.connect_ex((reachable(host), port)) == 0


def wait_until(
    check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05
) -> None:
    """Call ``check`` every ``interval`` seconds until it returns true.

    Raises ``TimeoutError`` naming ``what`` after ``timeout`` seconds; an
    exception from ``check`` propagates at once (a process that died).
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")


def wait_while_progressing(
    progress: Callable[[], int],
    target: int,
    stall: float,
    what: str,
    interval: float = 0.05,
) -> None:
    """Call ``progress`` every ``interval`` seconds until it reaches
    ``target``, for as long as it keeps rising: a busy machine that is slow
    but moving passes, one that is stuck fails.

    Raises ``TimeoutError`` naming ``what`` once ``stall`` seconds pass
    without a rise.
    """
    best = progress()
    deadline = time.monotonic() + stall
    while best < target:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"no progress for {stall:g} s waiting for {what} ({best}/{target})"
            )
        time.sleep(interval)
        now = progress()
        if now > best:
            best, deadline = now, time.monotonic() + stall


async def async_wait_until(
    check: Callable[[], Awaitable[bool]],
    within: float,
    what: str,
    interval: float = 0.05,
) -> None:
    """``wait_until`` for an async ``check`` (for at most ``within``
    seconds), pausing without blocking the event loop."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(interval)
    raise TimeoutError(f"timed out after {within:g} s waiting for {what}")


def http_ok(url: str, timeout: float = 2) -> bool:
    """Whether ``GET url`` answers 2xx now (a refused connection is ``False``)."""
    try:
        return httpx.get(url, timeout=timeout).is_success
    except httpx.TransportError:
        return False
