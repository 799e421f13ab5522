"""Over TCP against a real uvicorn process: streaming, keepalive, disconnects."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
from lgos_testkit import wait_until
from openai import OpenAI

USER = [{"role": "user", "content": "Hello"}]


def test_sdk_streams_from_a_real_server_over_tcp(live_server, request):
    client = OpenAI(base_url=live_server.base_url, api_key="unused", max_retries=0)
    request.addfinalizer(
        client.close
    )  # a socket left to the collector fails a later test

    stream = client.chat.completions.create(model="words", messages=USER, stream=True)
    deltas = [c.choices[0].delta.content for c in stream if c.choices]

    assert "".join(d for d in deltas if d) == "one two three four five"
    assert len([d for d in deltas if d]) == 5


def test_answer_text_reaches_the_client_while_the_model_still_streams(
    quiet_live_server,
):
    # The model waits after its first token until the client has seen it: a
    # server holding tokens back would leave both waiting until the read
    # timeout (this server sends no keepalive that would reset it).
    live_server = quiet_live_server
    tag = uuid.uuid4().hex
    body = {"model": "paced", "messages": _user(tag), "stream": True}
    release = live_server.marker_dir / f"{tag}.release"
    deltas = []

    with httpx.stream(
        "POST", f"{live_server.base_url}/chat/completions", json=body, timeout=30
    ) as response:
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"]
            if delta.get("content"):
                deltas.append((delta["content"], release.exists()))
                release.touch()

    assert "".join(text for text, _ in deltas) == "first then the rest"
    assert deltas[0] == ("first", False)


def _released_after_pings(lines: Iterator[str], release: Path, pings: int) -> list[str]:
    """Read a silent run's stream; once ``pings`` keepalives arrived, let the
    graph answer, then read to the end."""
    seen: list[str] = []
    for line in lines:
        if not line:
            continue
        seen.append(line)
        if seen.count(": ping") == pings:
            release.touch()
    return seen


def test_silent_graph_gets_keepalive_pings_and_proxy_headers(live_server):
    tag = uuid.uuid4().hex
    body = {"model": "silent", "messages": _user(tag), "stream": True}
    release = live_server.marker_dir / f"{tag}.release"

    with httpx.stream(
        "POST", f"{live_server.base_url}/chat/completions", json=body, timeout=30
    ) as response:
        headers = response.headers
        lines = _released_after_pings(response.iter_lines(), release, pings=3)

    assert headers["cache-control"] == "no-cache"
    assert headers["x-accel-buffering"] == "no"
    pings = [i for i, line in enumerate(lines) if line == ": ping"]
    answer = next(i for i, line in enumerate(lines) if "done waiting" in line)
    assert len(pings) >= 3
    assert all(i < answer for i in pings)
    assert lines[-1] == "data: [DONE]"


def test_client_disconnect_cancels_a_silent_graph(quiet_live_server):
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
        wait_until(started.exists, 30, "the graph to start")
        assert not cancelled.exists()

    # This server pings every 600 s: only its disconnect watcher can notice.
    wait_until(cancelled.exists, 30, "the graph to be cancelled")


def _user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_responses_stream_over_tcp_pings_while_silent(live_server):
    tag = uuid.uuid4().hex
    body = {"model": "silent", "input": tag, "stream": True}
    release = live_server.marker_dir / f"{tag}.release"

    with httpx.stream(
        "POST", f"{live_server.base_url}/responses", json=body, timeout=30
    ) as response:
        lines = _released_after_pings(response.iter_lines(), release, pings=3)

    assert lines.count(": ping") >= 3
    assert lines[-1].startswith('data: {"type":"response.completed"')


def test_responses_disconnect_cancels_the_graph(quiet_live_server):
    tag = uuid.uuid4().hex
    body = {"model": "hang", "input": tag, "stream": True}

    with httpx.stream(
        "POST", f"{quiet_live_server.base_url}/responses", json=body, timeout=10
    ) as response:
        assert response.status_code == 200
        wait_until(
            (quiet_live_server.marker_dir / f"{tag}.started").exists,
            30,
            "the graph to start",
        )

    wait_until(
        (quiet_live_server.marker_dir / f"{tag}.cancelled").exists,
        30,
        "the graph to be cancelled",
    )
