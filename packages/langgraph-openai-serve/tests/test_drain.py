"""``lgos serve``'s drain on real processes: on SIGTERM it turns not-ready at
once and goes on serving (``Connection: close`` on every answer) for
``LGOS_DRAIN_DELAY``; then it stops accepting, in-flight foreground streams
finish, and followers of background runs end cleanly and re-attach on
another process with ``starting_after``, missing nothing."""

from __future__ import annotations

import signal
import threading
import uuid

import httpx
import pytest
from background_stack import Stack
from conftest import start_lgos_serve
from lgos_testkit import wait_until
from openai import OpenAI

# Long enough that only the second SIGTERM ends the drain in these tests:
# what they check happens in order, never against the clock.
FOREVER = "600"


def _get(client: httpx.Client, path: str) -> httpx.Response | None:
    try:
        return client.get(path, timeout=5)
    except httpx.TransportError:
        return None


def test_sigterm_drains_then_a_second_one_stops_and_the_stream_in_flight_ends(
    tmp_path,
):
    serve = start_lgos_serve(tmp_path, "live_app:registry", LGOS_DRAIN_DELAY=FOREVER)
    root = serve.base_url.removesuffix("/v1")
    lines: list[str] = []

    def stream() -> None:
        with httpx.stream(
            "POST",
            f"{serve.base_url}/chat/completions",
            json={
                "model": "silent",
                "stream": True,
                "messages": [{"role": "user", "content": "drained"}],
            },
            timeout=60,
        ) as response:
            lines.extend(line for line in response.iter_lines() if line)

    reader = threading.Thread(target=stream)
    reader.start()
    wait_until((tmp_path / "drained.started").exists, 60, "the graph to start")
    with httpx.Client(base_url=root) as keep_alive:
        before = keep_alive.get("/v1/models")
        serve.process.process.send_signal(signal.SIGTERM)
        wait_until(
            lambda: keep_alive.get("/health/ready").status_code == 503,
            60,
            "the drain",
        )
        ready = keep_alive.get("/health/ready")
        live = keep_alive.get("/health/live")
        during = keep_alive.get("/v1/models")
        serve.process.process.send_signal(signal.SIGTERM)  # ends the drain
        wait_until(lambda: _get(keep_alive, "/health/live") is None, 60, "the close")
    (tmp_path / "drained.release").touch()
    reader.join(timeout=60)
    exit_code = serve.process.process.wait(timeout=60)
    log = serve.process.log_tail(20000)

    assert before.headers.get("connection") != "close"
    assert ready.json() == {
        "status": "not_ready",
        "reason": "draining",
    }
    assert live.status_code == 200
    assert during.status_code == 200
    assert [m["id"] for m in during.json()["data"]] == [
        "words",
        "paced",
        "silent",
        "hang",
    ]
    assert during.headers["connection"] == "close"
    # The stream begun before the signals ended as it would have anyway.
    assert any("done waiting" in line for line in lines)
    assert lines[-1] == "data: [DONE]"
    assert exit_code in (0, -signal.SIGTERM)
    assert log.index("lgos.draining delay_s=600") < log.index("lgos.stopping")


@pytest.fixture
def stack(tmp_path, postgres_uri, bytecode_cache):
    stack = Stack(tmp_path, postgres_uri, bytecode_cache)
    yield stack
    stack.stop()


def test_a_follower_ends_cleanly_when_its_process_stops_and_resumes_elsewhere(
    stack, tmp_path
):
    # A shutdown timeout far longer than the test: a follower holding the
    # process open would keep it from exiting.
    stopping = stack.serve(log=tmp_path / "stopping.log", LGOS_SHUTDOWN_TIMEOUT="600")
    other = stack.serve(log=tmp_path / "other.log")
    stack.start_worker()
    tag = uuid.uuid4().hex[:8]
    first = OpenAI(base_url=stopping.base_url, api_key="x", max_retries=0)
    second = OpenAI(base_url=other.base_url, api_key="x", max_retries=0)
    submitted = first.responses.create(model="hold", input=tag, background=True)
    stack.wait_marker("started", tag)

    seen = []
    with first.responses.retrieve(submitted.id, stream=True) as stream:
        for event in stream:
            seen.append(event)
            if event.type == "response.in_progress":
                stopping.process.send_signal(signal.SIGTERM)
    exit_code = stopping.process.wait(timeout=60)
    cut_at = seen[-1].sequence_number
    stack.release(tag)
    with second.responses.retrieve(
        submitted.id, stream=True, starting_after=cut_at
    ) as stream:
        seen.extend(stream)
    first.close()
    second.close()

    assert exit_code in (0, -signal.SIGTERM)
    assert [e.type for e in seen[: cut_at + 1]] == [
        "response.created",
        "response.in_progress",
    ]
    assert [e.sequence_number for e in seen] == list(range(len(seen)))
    assert seen[-1].type == "response.completed"
    assert seen[-1].response.output_text == f"Held {tag}."
