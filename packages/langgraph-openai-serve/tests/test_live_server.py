"""Over TCP against a real uvicorn process: streaming, keepalive, disconnects."""

from __future__ import annotations

import time
import uuid

import httpx
from openai import OpenAI

USER = [{"role": "user", "content": "Hello"}]


def test_sdk_streams_from_a_real_server_over_tcp(live_server):
    client = OpenAI(base_url=live_server.base_url, api_key="unused", max_retries=0)

    stream = client.chat.completions.create(model="words", messages=USER, stream=True)
    deltas = [c.choices[0].delta.content for c in stream if c.choices]

    assert "".join(d for d in deltas if d) == "one two three four five"
    assert len([d for d in deltas if d]) == 5


def test_silent_graph_gets_keepalive_pings_and_proxy_headers(live_server):
    body = {"model": "slow", "messages": USER, "stream": True}

    with httpx.stream(
        "POST", f"{live_server.base_url}/chat/completions", json=body, timeout=10
    ) as response:
        headers = response.headers
        lines = [line for line in response.iter_lines() if line]

    assert headers["cache-control"] == "no-cache"
    assert headers["x-accel-buffering"] == "no"
    pings = [i for i, line in enumerate(lines) if line == ": ping"]
    answer = next(i for i, line in enumerate(lines) if "done waiting" in line)
    # The graph is silent for 1 s and the server pings every 0.2 s.
    assert len(pings) >= 3
    assert all(i < answer for i in pings)
    assert lines[-1] == "data: [DONE]"


def test_client_disconnect_cancels_a_silent_graph_within_a_second(
    quiet_live_server,
):
    live_server = quiet_live_server
    tag = uuid.uuid4().hex
    started = live_server.marker_dir / f"{tag}.started"
    cancelled = live_server.marker_dir / f"{tag}.cancelled"
    body = {
        "model": "hang",
        "messages": [{"role": "user", "content": tag}],
        "stream": True,
    }

    with httpx.stream(
        "POST", f"{live_server.base_url}/chat/completions", json=body, timeout=10
    ) as response:
        assert response.status_code == 200
        _wait_for(started, seconds=5)
        assert not cancelled.exists()
    closed_at = time.monotonic()

    _wait_for(cancelled, seconds=1)
    assert time.monotonic() - closed_at < 1


def _wait_for(path, *, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} did not appear within {seconds} s")
        time.sleep(0.01)


def test_responses_stream_over_tcp_pings_while_silent(live_server):
    body = {"model": "slow", "input": "Hi", "stream": True}

    with httpx.stream(
        "POST", f"{live_server.base_url}/responses", json=body, timeout=10
    ) as response:
        lines = [line for line in response.iter_lines() if line]

    assert lines.count(": ping") >= 3
    assert lines[-1].startswith('data: {"type":"response.completed"')


def test_responses_disconnect_cancels_the_graph(quiet_live_server):
    tag = uuid.uuid4().hex
    body = {"model": "hang", "input": tag, "stream": True}

    with httpx.stream(
        "POST", f"{quiet_live_server.base_url}/responses", json=body, timeout=10
    ) as response:
        assert response.status_code == 200
        _wait_for(quiet_live_server.marker_dir / f"{tag}.started", seconds=5)

    _wait_for(quiet_live_server.marker_dir / f"{tag}.cancelled", seconds=1)
