"""Background runs in the Function, followed live through the gateway.

LiteLLM runs on the stack's own seed configuration (``lgos_stack.gateway``:
its key check and its follow route ``/lgos/v1/responses`` to LGOS), in front
of the demo API of this session's stack. With the ``background`` user valve
on, a graph that supports it is submitted with ``background=true`` through
LiteLLM and followed on the follow route by LGOS's id: statuses as they come,
the answer streamed, a dropped stream resumed after the last sequence number,
and a stopped chat cancels its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from lgos_testkit import async_wait_until
from owui_support import LITELLM_UI_KEY, Recorder, chat, user

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(600)]

MODEL = "lgos/background"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def stack_gateway(stack) -> str:
    """LiteLLM on the stack's seed configuration: its root URL."""
    return stack.gateway_url.removesuffix("/v1")


def background_pipe(function_module, stack_gateway, *, steps: int, seconds: float):
    pipe = function_module.Pipe()
    pipe.valves = function_module.Pipe.Valves(
        gateway_url=f"{stack_gateway}/v1", gateway_key=LITELLM_UI_KEY
    )
    settings = {MODEL: {"steps": steps, "step_seconds": seconds}}
    valves = function_module.Pipe.UserValves(
        background=True, settings=json.dumps(settings)
    )
    return pipe, {"valves": valves}


def run_gets(stack) -> list[str]:
    """The Response ids the demo API was asked for by ``GET``."""
    prefix = "/v1/responses/"
    return [
        path.removeprefix(prefix)
        for method, path in stack.requests
        if method == "GET" and path.startswith(prefix)
    ]


async def test_a_background_run_is_followed_live_through_the_gateway(
    function_module, stack, stack_gateway
):
    pipe, owner = background_pipe(function_module, stack_gateway, steps=2, seconds=0)
    recorder = Recorder()
    stack.requests.clear()

    text = await chat(pipe, recorder, MODEL, [user("Report, please")], __user__=owner)

    statuses = recorder.statuses()
    assert statuses[0] == "Running in the background"
    assert statuses[1:3] == [
        "Step 1/2: Collecting the records",
        "Step 2/2: Checking the totals",
    ]
    assert statuses[-2:] == ["Background run finished", "Background run finished"]
    assert text.strip()
    assert "resp_" not in text
    assert "LGOS:" not in text
    # Followed on LGOS's own stream, by LGOS's id (not LiteLLM's long one).
    (run_id,) = set(run_gets(stack))
    assert run_id.startswith("resp_")
    assert len(run_id) < 64


class CutOnce(httpx.AsyncBaseTransport):
    """Real HTTP; the first follow stream breaks off after ``frames`` events."""

    def __init__(self, frames: int) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.frames = frames
        self.follows: list[dict[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "GET" and request.url.params.get("stream"):
            self.follows.append(dict(request.url.params))
            if len(self.follows) == 1:
                response.stream = _cut(response.stream, self.frames)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Cut(httpx.AsyncByteStream):
    def __init__(self, inner: Any, frames: int) -> None:
        self.inner, self.frames = inner, frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # Cut at the frame boundary, not at a chunk's end: a fast run can
        # arrive whole in one chunk, and the drop must still come mid-stream.
        left = self.frames
        async for chunk in self.inner:
            end = 0
            while left and (found := chunk.find(b"\n\n", end)) != -1:
                end, left = found + 2, left - 1
            if not left:
                yield chunk[:end]
                raise httpx.ReadError("connection dropped (test)")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def _cut(inner: Any, frames: int) -> httpx.AsyncByteStream:
    return _Cut(inner, frames)


async def test_a_dropped_follow_resumes_after_the_last_sequence_number(
    function_module, stack_gateway
):
    pipe, owner = background_pipe(function_module, stack_gateway, steps=3, seconds=0)
    recorder = Recorder()
    turn = function_module._Turn(
        pipe, {"model": MODEL}, owner, recorder.emit, recorder.call
    )
    graph = function_module.Graph(model=MODEL, features=frozenset({"background"}))
    settings = function_module.settings_for(graph, owner["valves"].settings)
    body = function_module.request_body(
        graph,
        [function_module.user_item("Report after a drop")],
        chat_id="chat-drop",
        settings=settings,
        offer_display_file=False,
    )
    transport = CutOnce(frames=4)
    state = function_module.StreamState()

    async with httpx.AsyncClient(transport=transport, timeout=60) as http:
        actions = [a async for a in turn.follow(http, body, state)]

    first, second = transport.follows[:2]
    assert first["starting_after"] == "-1"
    assert int(second["starting_after"]) >= 3
    said = "".join(a.text for a in actions if isinstance(a, function_module.Say))
    (finished,) = [a for a in actions if isinstance(a, function_module.Finished)]
    final = "".join(
        part["text"]
        for item in finished.response["output"]
        if item.get("phase") == "final_answer"
        for part in item["content"]
    )
    # Nothing lost, nothing twice across the drop.
    assert said == final
    steps = [
        a.event["data"]["description"]
        for a in actions
        if isinstance(a, function_module.Emit) and a.event["type"] == "status"
    ]
    assert steps == [
        "Step 1/3: Collecting the records",
        "Step 2/3: Checking the totals",
        "Step 3/3: Comparing with last month",
        "All 3 steps done",
    ]


async def test_stopping_the_chat_cancels_its_background_run(
    function_module, stack, stack_gateway
):
    pipe, owner = background_pipe(function_module, stack_gateway, steps=4, seconds=30)
    recorder = Recorder()
    stack.requests.clear()
    turn = asyncio.create_task(
        chat(pipe, recorder, MODEL, [user("Stop me")], __user__=owner)
    )

    async def started() -> bool:
        return any(s.startswith("Step 1/") for s in recorder.statuses())

    await async_wait_until(started, within=120, what="the run's first step")
    turn.cancel()  # what Open WebUI's stop button does to the pipe's task
    with contextlib.suppress(asyncio.CancelledError):
        await turn

    (run_id,) = set(run_gets(stack))
    async with httpx.AsyncClient(timeout=30) as http:
        answer = await http.get(
            f"{stack_gateway}/lgos/v1/responses/{run_id}",
            headers={"Authorization": f"Bearer {LITELLM_UI_KEY}"},
        )
    assert answer.json()["status"] == "cancelled"


async def test_a_gateway_without_the_follow_route_is_explained(
    function_module, stack_gateway
):
    pipe, owner = background_pipe(function_module, stack_gateway, steps=1, seconds=0)
    pipe.valves.follow_url = f"{stack_gateway}/no-route/v1"
    recorder = Recorder()

    text = await chat(pipe, recorder, MODEL, [user("Where to?")], __user__=owner)

    assert "no follow route for background runs" in text
    assert f"{stack_gateway}/no-route/v1" in text
