"""Streams cut by the server end the protocol's way, never with a bare close:
a run past ``LGOS_RUN_TIMEOUT`` (cancelled), and a stream still going when
``lgos serve`` reaches its shutdown deadline after SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Hang:
    """What the hanging graph's last run did: ``hung`` once its node streamed
    "partial" and began to wait forever, ``cancelled`` once the node saw the
    cancellation, wherever it was."""

    hung: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


def _partial_then_hang(hang: Hang) -> Any:
    """Streams "partial" as answer text, then waits until cancelled."""
    model = ScriptedChatModel(responder=lambda _messages: "partial")

    async def node(state: MessagesState) -> dict[str, list[BaseMessage]]:
        try:
            reply = await model.ainvoke(state["messages"])
            hang.hung.set()
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            hang.cancelled.set()
            raise
        return {"messages": [reply]}

    return one_node_graph(node)


class Limited:
    """An app whose runs may take 0.3 s, serving one graph that never ends."""

    def __init__(self) -> None:
        self.hang = Hang()
        server = LanggraphOpenaiServe(
            graphs=GraphRegistry(registry={"m": config(_partial_then_hang(self.hang))}),
            settings=Settings(RUN_TIMEOUT=0.3),
        ).bind_openai_api()
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=server.app), base_url="http://t"
        )

    async def post_past_the_limit(
        self, path: str, body: dict[str, Any]
    ) -> httpx.Response:
        """POST until a run reached its hang before the limit cut it.

        Every test here is about a run cut while it hangs. On a starved
        machine the 0.3 s can run out earlier, while the model still answers;
        such a try says nothing about the cut, so it is made again."""
        for _ in range(5):
            self.hang.hung.clear()
            self.hang.cancelled.clear()
            response = await self.http.post(path, json=body)
            if self.hang.hung.is_set():
                return response
        pytest.fail("no run reached its hang within LGOS_RUN_TIMEOUT in 5 tries")


@pytest.fixture
async def limited():
    app = Limited()
    async with app.http:
        yield app


@pytest.mark.anyio
async def test_a_responses_stream_past_the_run_timeout_fails_with_run_timeout(limited):
    response = await limited.post_past_the_limit(
        "/v1/responses", {"model": "m", "input": "Go", "stream": True}
    )

    events = sse_events(response.text)
    assert [event["type"] for event in events[-2:]] == ["error", "response.failed"]
    failed = events[-1]["response"]
    assert failed["error"]["code"] == "run_timeout"
    assert "0.3 s" in failed["error"]["message"]
    assert failed["output"][0]["content"][0]["text"] == "partial"
    assert limited.hang.cancelled.is_set()


@pytest.mark.anyio
async def test_a_chat_stream_past_the_run_timeout_ends_with_an_error_chunk(limited):
    response = await limited.post_past_the_limit(
        "/v1/chat/completions", {"model": "m", "messages": USER, "stream": True}
    )

    chunks = [
        json.loads(line[6:])
        for line in response.text.splitlines()
        if line.startswith("data: {")
    ]
    assert chunks[1]["choices"][0]["delta"] == {"content": "partial"}
    assert chunks[-1]["error"]["code"] == "run_timeout"
    assert chunks[-1]["error"]["type"] == "server_error"
    assert limited.hang.cancelled.is_set()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"model": "m", "input": "Go"}),
        ("/v1/chat/completions", {"model": "m", "messages": USER}),
    ],
)
async def test_a_request_past_the_run_timeout_answers_504(limited, path, body):
    response = await limited.post_past_the_limit(path, body)

    assert response.status_code == 504
    assert response.json()["error"]["code"] == "run_timeout"
    assert limited.hang.cancelled.is_set()


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
