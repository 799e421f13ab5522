"""Debian's HAProxy (``scripts/install-haproxy.sh``) as a load balancer in
front of real server processes, health-checking them the way a production
balancer does.

``haproxy`` writes a configuration for the backends it is given, runs
``haproxy -db`` (foreground) on a free loopback port and yields once the
balancer sees a backend up. Its balancing is round robin; a backend is
taken out after two failed checks of ``health_path`` in a row and back in
after one good one, checked every ``check_interval`` seconds (a check may
take 3 s: a slow answer on a busy machine is not a failed one). A connection a backend
refuses (or closes without an answer) is retried on another backend, so a
server that turns not-ready before it closes its port costs clients nothing.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from lgos_stack.net import LOOPBACK, STARTUP_SECONDS, free_port, wait_until
from lgos_stack.processes import RunningProcess, start_process


class HAProxyMissingError(RuntimeError):
    """No ``haproxy`` binary: run ``scripts/install-haproxy.sh``."""


def haproxy_binary() -> str:
    """Debian installs it in ``/usr/sbin``, which a user's PATH may lack."""
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if found is None:
        raise HAProxyMissingError(
            "haproxy is not installed: run `bash scripts/install-haproxy.sh`"
        )
    return found


@dataclass(frozen=True)
class Balancer:
    """A running HAProxy: ``url`` is where clients connect."""

    url: str
    process: RunningProcess

    def servers(self) -> list[dict[str, str]]:
        """One row per backend server of the stats page (HAProxy's CSV
        columns: ``status``, ``wretr`` retries, ``wredis`` redispatches...)."""
        text = httpx.get(f"{self.url}/haproxy-stats;csv", timeout=5).text
        rows = list(csv.DictReader(io.StringIO(text.lstrip("# "))))
        return [row for row in rows if row["svname"] not in {"FRONTEND", "BACKEND"}]

    def backends_up(self) -> int:
        """How many backends the balancer routes to now (``UP``, or ``UP 1/2``:
        up, one failed check on its way down)."""
        return sum(1 for row in self.servers() if row["status"].startswith("UP"))


def config(
    port: int,
    backends: Sequence[int],
    *,
    health_path: str,
    check_interval: float,
    timeout: float,
) -> str:
    """The configuration ``haproxy`` runs."""
    check_ms = max(1, round(check_interval * 1000))
    rest = f"downinter {check_ms}ms fall 2 rise 1"
    servers = "\n".join(
        f"    server backend{i} {LOOPBACK}:{backend} check"
        for i, backend in enumerate(backends)
    )
    return f"""\
global
    maxconn 2000
    log stdout format raw local0 notice

defaults
    mode http
    log global
    option httplog
    option dontlog-normal
    timeout connect 2s
    timeout check 3s
    timeout client {timeout:g}s
    timeout server {timeout:g}s
    # A refused or empty connection is tried again on another backend.
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response

frontend clients
    bind {LOOPBACK}:{port}
    stats enable
    stats uri /haproxy-stats
    default_backend servers

backend servers
    balance roundrobin
    option httpchk GET {health_path}
    http-check expect status 200
    default-server inter {check_ms}ms fastinter {check_ms}ms {rest}
{servers}
"""


@contextlib.contextmanager
def haproxy(
    root: Path,
    backends: Sequence[int],
    *,
    health_path: str = "/health/ready",
    check_interval: float = 0.25,
    timeout: float = 120,
) -> Iterator[Balancer]:
    """HAProxy balancing over the loopback ``backends`` ports for the block;
    its configuration and log go to ``root``."""
    port = free_port()
    cfg = root / "haproxy.cfg"
    cfg.write_text(
        config(
            port,
            backends,
            health_path=health_path,
            check_interval=check_interval,
            timeout=timeout,
        )
    )
    process = start_process(
        [haproxy_binary(), "-db", "-f", cfg],
        log=root / "haproxy.log",
        name="HAProxy",
    )
    balancer = Balancer(f"http://{LOOPBACK}:{port}", process)
    try:
        wait_until(lambda: _routes(balancer), STARTUP_SECONDS, "HAProxy to route")
        yield balancer
    finally:
        process.stop(timeout=10)


def _routes(balancer: Balancer) -> bool:
    if balancer.process.exited():
        raise RuntimeError(f"HAProxy exited:\n{balancer.process.log_tail()}")
    try:
        return balancer.backends_up() > 0
    except httpx.TransportError:
        return False
