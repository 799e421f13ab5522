"""A PostgreSQL of a test's own, and the faults a production database has.

``FaultyPostgres`` runs the stack's PostgreSQL (``python -m
lgos_stack.postgres``, on loopback TCP, as a deployment reaches it) in a
fresh cluster, with a database ``lgos`` for the code under test and
``postgres`` for the test's own statements. The faults:

- ``terminate_clients()``: every client backend of ``lgos`` is terminated,
  as a failover or a pooler restart looks to clients;
- ``refusing()``: connections to ``lgos`` are refused (``ALLOW_CONNECTIONS
  false``) and the open ones terminated, until the block ends;
- ``stalled()``: every process of the server is stopped (SIGSTOP) until the
  block ends: a partition, where nothing answers and nothing errors;
- ``restart()``: the server stops (a fast shutdown) and starts again on the
  same port and data.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
from lgos_stack.net import STARTUP_SECONDS, free_port, wait_until
from lgos_stack.postgres import database_url
from lgos_stack.processes import RunningProcess, start_process

DATABASE = "lgos"


class FaultyPostgres:
    """A running cluster and its faults; ``close()`` stops and deletes it."""

    def __init__(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="lgos-faulty-pg-"))
        self.port = free_port()
        self._server: RunningProcess | None = None
        self._start()
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")

    @property
    def admin_url(self) -> str:
        return database_url("127.0.0.1", self.port, self.base / "data")

    @property
    def url(self) -> str:
        """The database the code under test uses."""
        return database_url("127.0.0.1", self.port, self.base / "data", DATABASE)

    def _start(self) -> None:
        self._server = start_process(
            [
                sys.executable,
                "-m",
                "lgos_stack.postgres",
                "--data",
                self.base / "data",
                "--port",
                str(self.port),
            ],
            log=self.base / "postgres.log",
            name="the faulty PostgreSQL",
            append=True,
        )
        wait_until(self._answers, STARTUP_SECONDS, "PostgreSQL to accept connections")

    def _answers(self) -> bool:
        if self._server is not None and self._server.exited():
            raise RuntimeError(f"PostgreSQL exited:\n{self._server.log_tail()}")
        try:
            with psycopg.connect(self.admin_url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def _admin(self, statement: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(statement)

    def clients(self) -> int:
        """Client backends connected to ``lgos`` now."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                (DATABASE,),
            ).fetchone()
        return int(row[0]) if row else 0

    def terminate_clients(self) -> None:
        self._admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{DATABASE}' AND pid <> pg_backend_pid()"
        )

    @contextlib.contextmanager
    def refusing(self) -> Iterator[None]:
        self._admin(f"ALTER DATABASE {DATABASE} ALLOW_CONNECTIONS false")
        try:
            self.terminate_clients()
            yield
        finally:
            self._admin(f"ALTER DATABASE {DATABASE} ALLOW_CONNECTIONS true")

    def _processes(self) -> list[int]:
        """The server's processes: the postmaster and its children."""
        assert self._server is not None
        wrapper = str(self._server.pid)
        found = subprocess.run(
            ["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=True
        ).stdout.split("\n")
        children: dict[str, list[str]] = {}
        for line in found:
            parts = line.split()
            if len(parts) == 2:
                children.setdefault(parts[1], []).append(parts[0])
        postmasters = children.get(wrapper, [])
        pids = list(postmasters)
        for postmaster in postmasters:
            pids.extend(children.get(postmaster, []))
        return [int(pid) for pid in pids]

    @contextlib.contextmanager
    def stalled(self) -> Iterator[None]:
        pids = self._processes()
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def stop(self) -> None:
        """A fast shutdown; ``start()`` brings it back on the same port."""
        if self._server is not None:
            self._server.stop(signal.SIGTERM, timeout=30)
            self._server = None

    def start(self) -> None:
        if self._server is None:
            self._start()

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


@contextlib.contextmanager
def faulty_postgres() -> Iterator[FaultyPostgres]:
    server = FaultyPostgres()
    try:
        yield server
    finally:
        server.close()
