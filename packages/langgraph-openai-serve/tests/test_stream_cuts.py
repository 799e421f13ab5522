"""Streams cut by the server end the protocol's way, never with a bare close:
a run past ``LGOS_RUN_TIMEOUT`` (cancelled), and a stream still going when
``lgos serve`` reaches its shutdown deadline after SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from typing import Any

import httpx
import pytest
from conftest import start_lgos_serve
from langchain_core.messages import BaseMessage
from langgraph.graph import MessagesState
from langgraph_openai_serve import GraphRegistry, LanggraphOpenaiServe, Settings
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import wait_until
from support import config, one_node_graph, sse_events

USER = [{"role": "user", "content": "Go"}]


def _partial_then_hang(cancelled: asyncio.Event) -> Any:
    """Streams "partial" as answer text, then waits until cancelled."""
    model = ScriptedChatModel(replies=["partial"])

    async def node(state: MessagesState) -> dict[str, list[BaseMessage]]:
        reply = await model.ainvoke(state["messages"])
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {"messages": [reply]}

    return one_node_graph(node)


@pytest.fixture
def limited():
    """An app whose runs may take 0.3 s, serving one graph that never ends."""
    cancelled = asyncio.Event()
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(registry={"m": config(_partial_then_hang(cancelled))}),
        settings=Settings(RUN_TIMEOUT=0.3),
    ).bind_openai_api()
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    )
    return http, cancelled


@pytest.mark.anyio
async def test_a_responses_stream_past_the_run_timeout_fails_with_run_timeout(limited):
    http, cancelled = limited
    async with http:
        response = await http.post(
            "/v1/responses", json={"model": "m", "input": "Go", "stream": True}
        )

    events = sse_events(response.text)
    assert [event["type"] for event in events[-2:]] == ["error", "response.failed"]
    failed = events[-1]["response"]
    assert failed["error"]["code"] == "run_timeout"
    assert "0.3 s" in failed["error"]["message"]
    assert failed["output"][0]["content"][0]["text"] == "partial"
    assert cancelled.is_set()


@pytest.mark.anyio
async def test_a_chat_stream_past_the_run_timeout_ends_with_an_error_chunk(limited):
    http, cancelled = limited
    async with http:
        response = await http.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": USER, "stream": True},
        )

    chunks = [
        json.loads(line[6:])
        for line in response.text.splitlines()
        if line.startswith("data: {")
    ]
    assert chunks[1]["choices"][0]["delta"] == {"content": "partial"}
    assert chunks[-1]["error"]["code"] == "run_timeout"
    assert chunks[-1]["error"]["type"] == "server_error"
    assert cancelled.is_set()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"model": "m", "input": "Go"}),
        ("/v1/chat/completions", {"model": "m", "messages": USER}),
    ],
)
async def test_a_request_past_the_run_timeout_answers_504(limited, path, body):
    http, cancelled = limited
    async with http:
        response = await http.post(path, json=body)

    assert response.status_code == 504
    assert response.json()["error"]["code"] == "run_timeout"
    assert cancelled.is_set()


def test_streams_cut_by_the_shutdown_deadline_end_with_the_protocols_failure(
    tmp_path,
):
    served = start_lgos_serve(tmp_path, "live_app:registry", LGOS_SHUTDOWN_TIMEOUT="1")
    transcripts: dict[str, list[str]] = {}

    def read(kind: str, path: str, body: dict[str, Any]) -> None:
        lines = transcripts.setdefault(kind, [])
        with httpx.stream(
            "POST", f"{served.base_url}{path}", json=body, timeout=30
        ) as response:
            lines.extend(response.iter_lines())

    readers = [
        threading.Thread(
            target=read,
            args=("chat", "/chat/completions"),
            kwargs={
                "body": {
                    "model": "hang",
                    "stream": True,
                    "messages": [{"role": "user", "content": "cut-chat"}],
                }
            },
        ),
        threading.Thread(
            target=read,
            args=("responses", "/responses"),
            kwargs={"body": {"model": "hang", "stream": True, "input": "cut-resp"}},
        ),
    ]
    try:
        for reader in readers:
            reader.start()
        wait_until(
            lambda: all(
                (tmp_path / f"{tag}.started").exists()
                for tag in ("cut-chat", "cut-resp")
            ),
            20,
            "both graphs to start",
        )
        served.process.stop(signal.SIGTERM, timeout=30)
        for reader in readers:
            reader.join(timeout=30)
    finally:
        served.process.stop(signal.SIGKILL)

    chat = [
        json.loads(line[6:]) for line in transcripts["chat"] if line[:7] == "data: {"
    ]
    assert chat[-1]["error"]["code"] == "server_shutdown"
    responses = sse_events("\n".join(transcripts["responses"]))
    assert responses[-1]["type"] == "response.failed"
    assert responses[-1]["response"]["error"]["code"] == "server_shutdown"
    assert served.process.process.returncode in (0, -signal.SIGTERM)
