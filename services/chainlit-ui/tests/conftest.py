"""Fixtures: a real LGOS server (the core library + scripted graphs), a real
Files API on SeaweedFS, and the UI's conversation objects over the official SDK.

The servers start once per session; each test gets fresh SDK clients, a fresh
chat store in its temp dir and a fresh thread id.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lgos_chainlit.catalog import LgosCatalog
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.conversation import Conversation
from lgos_chainlit.files import FilesClient
from lgos_testkit import FilesApi, ThreadServer, files_api_on_seaweedfs
from openai import AsyncOpenAI
from ui_lgos_app import FilesAccess, Hold, Recorder, create_app
from ui_support import (
    FILES_BUCKET,
    GRAPH_FILES_KEY,
    UI_FILES_KEY,
    start_ui,
)

ConversationFactory = Callable[..., Awaitable[Conversation]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class LgosServer:
    base_url: str
    recorder: Recorder
    hold: Hold


@pytest.fixture(scope="session")
def files_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FilesApi]:
    """The Files API on SeaweedFS; one owner with the UI's and the graphs' key."""
    keys = {UI_FILES_KEY: "chat", GRAPH_FILES_KEY: "chat"}
    with files_api_on_seaweedfs(
        tmp_path_factory.mktemp("seaweed"), bucket=FILES_BUCKET, keys=keys
    ) as server:
        yield server


@pytest.fixture(scope="session")
def lgos(files_server: FilesApi) -> Iterator[LgosServer]:
    recorder, hold = Recorder(), Hold()
    files = FilesAccess(url=files_server.openai_url, key=GRAPH_FILES_KEY)
    with ThreadServer(create_app(files, recorder, hold)) as server:
        yield LgosServer(base_url=f"{server.url}/v1", recorder=recorder, hold=hold)


@pytest.fixture
def hold(lgos: LgosServer) -> Iterator[Hold]:
    """The ``held`` graph's gate, closed; opened after the test (a run the
    test left held ends)."""
    lgos.hold.reset()
    yield lgos.hold
    lgos.hold.release()


@pytest.fixture
def ui(
    lgos: LgosServer, files_server: FilesApi, tmp_path: Path
) -> Iterator[tuple[str, Path, Path]]:
    """The Chainlit app (``lgos-chainlit``) against the LGOS server:
    (base URL, home, cwd)."""
    with start_ui(lgos.base_url, files_server.openai_url, tmp_path) as started:
        yield started


@pytest.fixture
def recorder(lgos: LgosServer) -> Recorder:
    lgos.recorder.bodies.clear()
    return lgos.recorder


@pytest.fixture
async def client(lgos: LgosServer) -> AsyncIterator[AsyncOpenAI]:
    sdk = AsyncOpenAI(base_url=lgos.base_url, api_key="ui", max_retries=0, timeout=30)
    yield sdk
    await sdk.close()


@pytest.fixture
async def files(files_server: FilesApi) -> AsyncIterator[FilesClient]:
    sdk = AsyncOpenAI(
        base_url=files_server.openai_url,
        api_key=UI_FILES_KEY,
        max_retries=0,
        timeout=30,
    )
    yield FilesClient(sdk, max_download_bytes=1024 * 1024)
    await sdk.close()


@pytest.fixture
def store(tmp_path: Path) -> ChatStore:
    return ChatStore(tmp_path / "chats")


@pytest.fixture
def thread_id() -> str:
    return str(uuid.uuid4())


@pytest.fixture
def make_conversation(
    client: AsyncOpenAI, store: ChatStore, files: FilesClient, thread_id: str
) -> ConversationFactory:
    """A Conversation with a graph as LGOS describes it, on the saved state.

    Like a reloaded page, it starts from the store when the thread has a
    saved state, else from a new one.
    """

    async def make(
        model: str, *, settings: dict[str, object] | None = None, **kwargs: object
    ) -> Conversation:
        graph = await LgosCatalog(client).describe(model)
        state = store.load(thread_id) or ChatState(thread_id=thread_id, model=model)
        if settings is not None:
            state.settings = dict(settings)
        for key, value in kwargs.items():
            setattr(state, key, value)
        return Conversation(client, graph, state, store, files)

    return make
