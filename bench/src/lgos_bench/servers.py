"""The two servers under test, each a real uvicorn process on loopback.

Both run the same uvicorn configuration (asyncio loop, h11, no access log) and
the same graphs; only the app factory differs. A server is started on its own
CPU core: the bench process pins itself to the server core, starts uvicorn
(which, with its workers, inherits the affinity) and pins itself back to the
load-generator core.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field

from lgos_stack.net import LOOPBACK, free_port, http_ok, wait_until

from lgos_bench.procstat import Usage, cpu_seconds, process_tree, rss_bytes
from lgos_bench.workload import Workload

HOST = LOOPBACK
FACTORIES = {
    "baseline": "lgos_bench.baseline_app:create_app",
    "lgos": "lgos_bench.lgos_app:create_app",
}
UVICORN_FLAGS = ["--loop", "asyncio", "--http", "h11", "--no-access-log"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Which cores the servers and the load generator run on."""

    server_cores: frozenset[int]
    load_cores: frozenset[int]

    @classmethod
    def split(cls, cores: list[int]) -> Placement:
        """First core for servers, the rest for load; unpinned on one core."""
        if len(cores) < 2:
            return cls(frozenset(cores), frozenset(cores))
        return cls(frozenset(cores[:1]), frozenset(cores[1:]))

    @property
    def pinned(self) -> bool:
        return not self.server_cores & self.load_cores

    def describe(self) -> str:
        if not self.pinned:
            return "not pinned (one core): server and load generator share it"
        return (
            f"server pinned to core(s) {sorted(self.server_cores)}, load generator "
            f"(and the in-process ceiling) to core(s) {sorted(self.load_cores)}"
        )


@dataclass
class ServerProcess:
    """One uvicorn process tree; ``stop()`` ends it by its PID."""

    kind: str
    workers: int
    workload: Workload
    placement: Placement
    env: dict[str, str] = field(default_factory=dict)
    """Settings of this server beyond the workload's (``LGOS_*``)."""
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    pids: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.kind if self.workers == 1 else f"{self.kind}x{self.workers}"

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout: float = 60.0) -> ServerProcess:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            FACTORIES[self.kind],
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
            "--log-level",
            "warning",
            *UVICORN_FLAGS,
        ]
        env = {**os.environ, **self.workload.env(), **self.env}
        # Let the first server cache bytecode; without it every start compiles
        # LangGraph, LangChain and FastAPI again (seconds on one core).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        own = os.sched_getaffinity(0)
        os.sched_setaffinity(0, self.placement.server_cores)
        try:
            self.process = subprocess.Popen(command, env=env)
        finally:
            os.sched_setaffinity(0, own)
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        process = self.process
        assert process is not None
        answers = 0

        def ready() -> bool:
            nonlocal answers
            if process.poll() is not None:
                raise RuntimeError(f"the {self.name} server exited during startup")
            answers = answers + 1 if http_ok(f"{self.base_url}/models") else 0
            # With several workers, see enough answers that all have started.
            if answers < 4 * self.workers:
                return False
            self.pids = process_tree(process.pid)
            return len(self.pids) > self.workers or self.workers == 1

        try:
            wait_until(ready, timeout, f"the {self.name} server")
        except TimeoutError:
            self.stop()  # not left running behind the failed run
            raise RuntimeError(
                f"the {self.name} server did not start in {timeout} s"
            ) from None

    def usage(self) -> Usage:
        """CPU and RSS of the server's processes (found once, at startup)."""
        return Usage(cpu_seconds(self.pids), rss_bytes(self.pids))

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            for pid in reversed(self.pids):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
            process.wait(timeout=5)
