"""``lgos worker``'s health port: ``/health/live`` and ``/health/ready``
(registered in the queue, heartbeating, not stopping), with real worker
processes on the session's PostgreSQL."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid

import httpx
import pytest
from background_stack import Stack, terminate
from lgos_testkit import STARTUP_SECONDS, free_port, wait_until


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache):
    stack = Stack(tmp_path, postgres_uri, bytecode_cache)
    yield stack
    stack.stop()


def _get(url: str) -> tuple[int | None, dict]:
    try:
        answer = httpx.get(url, timeout=5)
    except httpx.TransportError:
        return None, {}
    return answer.status_code, answer.json()


def _wait_ready(worker: subprocess.Popen[bytes], url: str) -> dict:
    def ready() -> bool:
        if worker.poll() is not None:
            raise AssertionError(f"the worker exited with {worker.returncode}")
        return _get(f"{url}/health/ready")[0] == 200

    wait_until(ready, STARTUP_SECONDS, "the worker to be ready")
    return _get(f"{url}/health/ready")[1]


def test_a_stopping_worker_turns_not_ready_but_stays_live_until_it_exits(stack):
    stack.start_api()
    port = free_port()
    worker = stack._spawn("worker", "--health-port", str(port))
    url = f"http://127.0.0.1:{port}"
    ready = _wait_ready(worker, url)
    tag = uuid.uuid4().hex[:8]
    submitted = stack.client().responses.create(
        model="hold", input=tag, background=True
    )
    stack.wait_marker("started", tag)

    terminate(worker)
    wait_until(lambda: _get(f"{url}/health/ready")[0] == 503, 30, "not ready")
    stopping = _get(f"{url}/health/ready")
    live = _get(f"{url}/health/live")
    stack.release(tag)
    exit_code = worker.wait(timeout=60)
    done = stack.wait_status(submitted.id, {"completed", "failed"})

    assert ready == {"status": "ready", "checks": {"queue": "ok"}}
    assert stopping == (
        503,
        {"status": "not_ready", "reason": "stopping"},
    )
    assert live == (200, {"status": "alive"})
    assert exit_code == 0
    assert done.output_text == f"Held {tag}."
    assert _get(f"{url}/health/live") == (None, {})  # closed with the process


def test_a_worker_the_queue_no_longer_lists_is_not_ready_and_logs_why(stack, tmp_path):
    port = free_port()
    log = tmp_path / "worker.log"
    worker = stack.start_worker(log, LGOS_WORKER_HEALTH_PORT=str(port))
    url = f"http://127.0.0.1:{port}"
    _wait_ready(worker, url)

    # What another worker's prune does to one it counts as stalled.
    stack.sql("DELETE FROM procrastinate_workers")
    status, body = _get(f"{url}/health/ready")

    # The probe gets a code; the reason in words is in the worker's log.
    assert (status, body) == (
        503,
        {
            "status": "not_ready",
            "reason": "queue_unavailable",
            "checks": {"queue": "unavailable"},
        },
    )
    assert _get(f"{url}/health/live")[0] == 200
    assert "is no longer registered (another worker counted it as stalled)" in (
        log.read_text()
    )


def test_a_worker_whose_health_port_is_taken_exits_saying_so(stack):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        worker = subprocess.run(
            [sys.executable, "-m", "langgraph_openai_serve.cli", "worker"],
            env={**stack.env, "LGOS_WORKER_HEALTH_PORT": str(port)},
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
        )

    assert worker.returncode == 1
    assert f"lgos worker: cannot serve health on 127.0.0.1:{port}" in worker.stderr
