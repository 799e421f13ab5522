"""A fleet on one PostgreSQL: ``lgos serve`` processes on fixed ports and
``lgos worker`` processes with health ports, restarted in place the way a
rolling upgrade does (SIGTERM, wait for the exit, start the new one on the
same port, wait until it is ready), or killed for good.

Built on ``background_stack.Stack`` (the database, ``db-setup``, the
environment); every process's output goes to its own log in ``logs``,
appended across restarts.
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from background_stack import Stack
from lgos_testkit import free_ports, wait_until

DRAIN_DELAY = 3.0
"""What the fleet's API processes drain: several of a balancer's checks."""

FLEET_ENV = {
    "LGOS_DRAIN_DELAY": str(DRAIN_DELAY),
    "LGOS_SHUTDOWN_TIMEOUT": "60",
    # Longer than any run: a SIGTERMed worker finishes what it runs.
    "LGOS_WORKER_SHUTDOWN_TIMEOUT": "30",
    "LGOS_BACKGROUND_CONCURRENCY": "6",
    "LGOS_LOG_LEVEL": "INFO",
    "LGOS_LOG_FORMAT": "text",
}


@dataclass
class ApiRestart:
    """What one API process did between its SIGTERM and its replacement."""

    port: int
    not_ready_first: bool
    """``/health/ready`` answered 503 before the port refused connections."""
    not_ready_after: float
    """Seconds from SIGTERM to the first 503 the restarter saw."""
    closed_after: float
    """Seconds from SIGTERM to the first refused connection."""
    exited_after: float
    ready_again_after: float
    """Seconds from the old process's exit to the new one being ready."""


@dataclass
class Fleet:
    stack: Stack
    logs: Path
    api_count: int
    worker_count: int
    api_ports: list[int] = field(default_factory=list)
    worker_ports: list[int] = field(default_factory=list)
    apis: list[subprocess.Popen[bytes]] = field(default_factory=list)
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self) -> None:
        """Every process at once, then wait until each is ready."""
        self.logs.mkdir(exist_ok=True)
        ports = free_ports(self.api_count + self.worker_count)
        self.api_ports = ports[: self.api_count]
        self.worker_ports = ports[self.api_count :]
        self.apis = [self._spawn_api(i) for i in range(self.api_count)]
        self.workers = [self._spawn_worker(i) for i in range(self.worker_count)]
        for i, api in enumerate(self.apis):
            self.stack.wait_ready(api, self.api_ports[i], f"api{i}")
        for i, worker in enumerate(self.workers):
            self.stack.wait_ready(worker, self.worker_ports[i], f"worker{i}")

    def _spawn_api(self, i: int) -> subprocess.Popen[bytes]:
        return self.stack.spawn_api(
            self.api_ports[i], self.logs / f"api{i}.log", **FLEET_ENV
        ).process

    def _spawn_worker(self, i: int) -> subprocess.Popen[bytes]:
        return self.stack.start_worker(
            self.logs / f"worker{i}.log",
            LGOS_WORKER_HEALTH_PORT=str(self.worker_ports[i]),
            **FLEET_ENV,
        )

    def api_roots(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.api_ports]

    def restart_api(self, i: int) -> ApiRestart:
        """SIGTERM api ``i``, watch its readiness until its port closes, then
        start its replacement on the same port."""
        port, old = self.api_ports[i], self.apis[i]
        url = f"http://127.0.0.1:{port}/health/ready"
        signalled = time.monotonic()
        old.send_signal(signal.SIGTERM)
        not_ready: float | None = None
        closed: float | None = None

        def port_closed() -> bool:
            nonlocal not_ready, closed
            try:
                status = httpx.get(url, timeout=5).status_code
            except httpx.TransportError:
                closed = time.monotonic()
                return True
            if status == 503 and not_ready is None:
                not_ready = time.monotonic()
            return False

        wait_until(port_closed, 120, f"api{i} to close its port", interval=0.02)
        old.wait(timeout=120)
        exited = time.monotonic()
        self.apis[i] = self._spawn_api(i)
        self.stack.wait_ready(self.apis[i], port, f"api{i}")
        assert closed is not None
        return ApiRestart(
            port=port,
            not_ready_first=not_ready is not None,
            not_ready_after=(not_ready or closed) - signalled,
            closed_after=closed - signalled,
            exited_after=exited - signalled,
            ready_again_after=time.monotonic() - exited,
        )

    def restart_worker(self, i: int) -> tuple[float, int | None]:
        """SIGTERM worker ``i`` (it finishes its runs), start its replacement
        once it exited; the seconds from SIGTERM to exit, and its exit code."""
        signalled = time.monotonic()
        old = self.workers[i]
        old.send_signal(signal.SIGTERM)
        code = old.wait(timeout=120)
        exited = time.monotonic() - signalled
        self.workers[i] = self._spawn_worker(i)
        self.stack.wait_ready(self.workers[i], self.worker_ports[i], f"worker{i}")
        return exited, code

    def kill_worker(self, i: int) -> int:
        """SIGKILL worker ``i`` for good; its PID."""
        worker = self.workers[i]
        worker.kill()
        worker.wait(timeout=30)
        return worker.pid
