"""Real ``lgos serve`` and ``lgos worker`` processes on the session's PostgreSQL,
for the background tests that stop, kill and restart them.

Every process loads ``background_app:registry``. Its graphs leave marker
files (``LGOS_TEST_MARKER_DIR``), so a test sees which process ran what.
Stalled-worker detection is shortened (``FAST_RECOVERY``) so a killed
worker's jobs come back within seconds, not the production half-minute.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
from conftest import TESTS_DIR
from langgraph.checkpoint.postgres import PostgresSaver
from lgos_testkit import STARTUP_SECONDS, free_port, wait_for_response, wait_until
from openai import OpenAI

FAST_RECOVERY = {
    "LGOS_WORKER_HEARTBEAT_INTERVAL": "0.5",
    "LGOS_WORKER_STALLED_TIMEOUT": "5",
    "LGOS_WORKER_STALLED_CHECK_INTERVAL": "0.5",
}

TERMINAL = {"completed", "incomplete", "failed", "cancelled"}


@dataclass(frozen=True)
class ApiProcess:
    """One ``lgos serve`` process of a stack, on its own port."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"


class Stack:
    """One database, any number of API and worker processes."""

    def __init__(
        self,
        markers: Path,
        postgres_uri: str,
        bytecode_cache: Path,
        **env: str,
    ) -> None:
        self.markers = markers
        self.postgres_uri = postgres_uri
        self.env = {
            **os.environ,
            "PYTHONPATH": str(TESTS_DIR),
            "LGOS_TEST_MARKER_DIR": str(markers),
            "LGOS_REGISTRY": "background_app:registry",
            "LGOS_BACKGROUND_BACKEND": "postgres",
            "LGOS_DATABASE_URL": postgres_uri,
            "LGOS_LOG_LEVEL": "WARNING",
            # Each process would compile every module again otherwise.
            "PYTHONPYCACHEPREFIX": str(bytecode_cache),
            **FAST_RECOVERY,
            **env,
        }
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.processes: list[subprocess.Popen[bytes]] = []
        subprocess.run(
            [sys.executable, "-m", "langgraph_openai_serve.cli", "db-setup"],
            env=self.env,
            check=True,
            timeout=120,
        )
        with PostgresSaver.from_conn_string(postgres_uri) as saver:
            saver.setup()  # the interrupt graph's checkpoints
        self.sql("TRUNCATE procrastinate_jobs CASCADE")
        self.sql("TRUNCATE lgos_background_responses CASCADE")
        self.api: subprocess.Popen[bytes] | None = None
        self.port = 0
        self._clients: list[OpenAI] = []

    def start_api(self) -> None:
        """Start the current API process (``base_url``, ``client()``)."""
        self.port = free_port()
        self.api = self._start_api(self.port)

    def another_api(self) -> tuple[subprocess.Popen[bytes], str]:
        """Start one more API process beside the current one: the process
        and its base URL."""
        port = free_port()
        return self._start_api(port), f"http://127.0.0.1:{port}/v1"

    def serve(
        self, port: int | None = None, log: Path | None = None, **env: str
    ) -> ApiProcess:
        """One more ``lgos serve`` (on ``port``, else a free one) with
        ``env`` added, its output in ``log``; returned once it is ready."""
        api = self.spawn_api(port, log, **env)
        self.wait_ready(api.process, api.port, "lgos serve")
        return api

    def spawn_api(
        self, port: int | None = None, log: Path | None = None, **env: str
    ) -> ApiProcess:
        """``serve`` without waiting for it."""
        port = port or free_port()
        return ApiProcess(
            self._spawn("serve", "--port", str(port), env=env, log=log), port
        )

    @staticmethod
    def wait_ready(process: subprocess.Popen[bytes], port: int, name: str) -> None:
        """Until ``/health/ready`` on ``port`` answers 200 (an API: its
        database and queue answer; a worker's health port: registered)."""
        url = f"http://127.0.0.1:{port}/health/ready"

        def ready() -> bool:
            if process.poll() is not None:
                raise RuntimeError(f"{name} on port {port} exited starting")
            try:
                return httpx.get(url, timeout=5).is_success
            except httpx.TransportError:
                return False

        wait_until(ready, STARTUP_SECONDS, f"{name} on port {port}")

    def _start_api(self, port: int) -> subprocess.Popen[bytes]:
        api = self._spawn("serve", "--port", str(port))

        def ready() -> bool:
            if api.poll() is not None:
                raise RuntimeError("the API process exited during startup")
            try:
                url = f"http://127.0.0.1:{port}/v1/health"
                return httpx.get(url, timeout=1).is_success
            except httpx.TransportError:
                return False

        wait_until(ready, STARTUP_SECONDS, "the API process")
        return api

    def stop_api(self) -> None:
        assert self.api is not None
        self.api.terminate()
        self.api.wait(timeout=30)

    def kill_api(self) -> None:
        assert self.api is not None
        self.api.kill()
        self.api.wait(timeout=10)

    def start_worker(
        self, log: Path | None = None, **env: str
    ) -> subprocess.Popen[bytes]:
        return self._spawn("worker", env=env, log=log)

    def _spawn(
        self, *args: str, env: dict[str, str] | None = None, log: Path | None = None
    ) -> Any:
        """``lgos *args``; its output goes to ``log`` (appended) when given."""
        with contextlib.ExitStack() as files:
            out = files.enter_context(log.open("ab")) if log is not None else None
            process = subprocess.Popen(
                [sys.executable, "-m", "langgraph_openai_serve.cli", *args],
                env={**self.env, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT if out is not None else None,
            )
        self.processes.append(process)
        return process

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self) -> OpenAI:
        """An SDK client of the current API process (closed by ``stop``)."""
        if not self._clients or str(self._clients[-1].base_url) != self.base_url + "/":
            self._clients.append(
                OpenAI(base_url=self.base_url, api_key="x", max_retries=0, timeout=30)
            )
        return self._clients[-1]

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.postgres_uri, autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def markers_of(self, kind: str, tag: str) -> list[Path]:
        return sorted(self.markers.glob(f"{kind}-{tag}-*"))

    def wait_marker(self, kind: str, tag: str, timeout: float = 60) -> Path:
        wait_until(lambda: bool(self.markers_of(kind, tag)), timeout, f"{kind}-{tag}")
        return self.markers_of(kind, tag)[-1]

    def release(self, tag: str) -> None:
        (self.markers / f"release-{tag}").touch()

    def status(self, response_id: str) -> str:
        return str(self.client().responses.retrieve(response_id).status)

    def wait_status(
        self, response_id: str, statuses: set[str], timeout: float = 60
    ) -> Any:
        return wait_for_response(self.client(), response_id, statuses, timeout)

    def job_done(self, response_id: str) -> bool:
        """The queue no longer holds the run's job as to do or doing (the
        worker deletes the jobs that succeeded)."""
        rows = self.sql(
            "SELECT status FROM procrastinate_jobs WHERE args->>'response_id' = %s",
            (response_id,),
        )
        return not rows or rows[0][0] not in {"todo", "doing"}

    def stop(self) -> None:
        for client in self._clients:
            client.close()
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def terminate(process: subprocess.Popen[bytes]) -> None:
    """Send SIGTERM, as ``docker stop``, Kubernetes and systemd do."""
    process.send_signal(signal.SIGTERM)
