"""What the UI's tests share beyond ``lgos_testkit``: the keys of the test
stack, the app started by its command, stream collectors and an HTTP
transport that records, cuts or rewrites the UI's stream requests."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
from lgos_chainlit.catalog import LgosCatalog
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.conversation import Conversation
from lgos_testkit import free_port, running
from openai import AsyncOpenAI
from ui_lgos_app import UI_GATEWAY_KEY

T = TypeVar("T")

UI_FILES_KEY = "sk-ui-test"
GRAPH_FILES_KEY = "sk-graph-test"
FILES_BUCKET = "lgos-chainlit-test"
LITELLM_MASTER_KEY = "sk-ui-test-master"


@contextlib.contextmanager
def start_ui(
    gateway_url: str, files_url: str, directory: Path, **extra_env: str
) -> Iterator[tuple[str, Path, Path]]:
    """The UI started by its console command against LGOS directly (its
    catalog too); yields (base URL, home, cwd)."""
    port = free_port()
    home, cwd = directory / "home", directory / "cwd"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_CHAINLIT_")}
    env |= {
        "LGOS_CHAINLIT_HOME": str(home),
        "LGOS_CHAINLIT_CATALOG": "lgos",
        "LGOS_CHAINLIT_GATEWAY_URL": gateway_url,
        "LGOS_CHAINLIT_GATEWAY_KEY": UI_GATEWAY_KEY,
        "LGOS_CHAINLIT_FILES_URL": files_url,
        **extra_env,
    }
    env.pop("CHAINLIT_AUTH_SECRET", None)
    url = f"http://127.0.0.1:{port}"
    with running(
        [sys.executable, "-m", "lgos_chainlit", "--port", str(port)],
        log=directory / "ui.log",
        name="the Chainlit UI",
        env=env,
        cwd=cwd,
        health_url=url,
        stop_timeout=15,
    ):
        yield url, home, cwd


async def collect(events: AsyncIterator[T]) -> list[T]:
    return [event async for event in events]


async def stopped(events: AsyncIterator[Any], stop: Callable[[Any], bool]) -> list:
    """Consume until ``stop`` holds, then cancel the consumer the way Chainlit
    does when the user presses stop or the page goes away."""
    seen: list[Any] = []
    reached = asyncio.Event()

    async def consume() -> None:
        async for event in events:
            seen.append(event)
            if stop(event):
                reached.set()

    task = asyncio.create_task(consume())
    await reached.wait()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return seen


class CutStream(httpx.AsyncByteStream):
    """A response body that breaks off after ``frames`` SSE events."""

    def __init__(self, inner: httpx.AsyncByteStream, frames: int) -> None:
        self.inner = inner
        self.frames = frames

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            yield chunk
            seen += chunk.count(b"\n\n")
            if seen >= self.frames:
                raise httpx.ReadError("connection dropped (test)")

    async def aclose(self) -> None:
        await self.inner.aclose()


class RecordingTransport(httpx.AsyncBaseTransport):
    """Real HTTP that records the stream retrievals; it can cut the first one
    short, refuse all of them, or answer them with the JSON snapshot (gateways
    that cannot stream a retrieve)."""

    def __init__(
        self,
        *,
        cut_after: int | None = None,
        refuse: bool = False,
        snapshot: bool = False,
    ):
        self.inner = httpx.AsyncHTTPTransport()
        self.cut_after = cut_after
        self.refuse = refuse
        self.snapshot = snapshot
        self.stream_queries: list[dict[str, str]] = []
        self.polls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        streaming = request.method == "GET" and request.url.params.get("stream")
        if request.method == "GET" and not streaming:
            self.polls += 1
        if streaming:
            self.stream_queries.append(dict(request.url.params))
            if self.refuse:
                error = {"message": "streaming is not supported here"}
                return httpx.Response(400, json={"error": error}, request=request)
            if self.snapshot:
                # What LiteLLM 1.108.7 does: the JSON snapshot, not a stream.
                params = request.url.params.remove("stream").remove("starting_after")
                request = httpx.Request("GET", request.url.copy_with(params=params))
                return await self.inner.handle_async_request(request)
        response = await self.inner.handle_async_request(request)
        if streaming and self.cut_after is not None:
            assert isinstance(response.stream, httpx.AsyncByteStream)
            response.stream = CutStream(response.stream, self.cut_after)
            self.cut_after = None
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def background_chat(
    client: AsyncOpenAI, store: ChatStore, thread_id: str
) -> Conversation:
    """A chat with the ``background`` graph, switch on, over ``client``."""
    graph = await LgosCatalog(client).describe("background")
    state = store.load(thread_id) or ChatState(
        thread_id=thread_id, model="background", background=True
    )
    return Conversation(client, graph, state, store)
