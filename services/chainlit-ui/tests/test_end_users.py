"""Each signed-in Chainlit user is a tenant of their own.

The UI's clients for a user (``Services.for_user``) name that user in
``x-lgos-end-user`` on every request: to LGOS (here reached directly with its
gateway key; through LiteLLM the stack's gateway forwards the header, which
the stack's own tests cover) and to the Files API with its gateway key. A
real LGOS server and a real Files API on SeaweedFS: Alice's background
Response and her upload are not found for Bob, whose login is an email
address (sent as a stable digest).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import openai
import pytest
from fastapi import FastAPI
from langgraph_openai_serve import (
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_chainlit.catalog import LgosCatalog
from lgos_chainlit.chats import ChatState, ChatStore
from lgos_chainlit.config import UIConfig
from lgos_chainlit.conversation import Conversation
from lgos_chainlit.events import AnswerDelta
from lgos_chainlit.files import FilesError
from lgos_chainlit.identity import end_user_id
from lgos_chainlit.services import Services, build_services
from lgos_testkit import ThreadServer, async_wait_until, files_api_on_seaweedfs
from lgos_testkit.graphs import whoami_config
from ui_support import collect

pytestmark = pytest.mark.anyio

LGOS_GATEWAY_KEY = "sk-chainlit-test-lgos-gateway"
FILES_GATEWAY_KEY = "sk-chainlit-test-files-gateway"
BOB = "bob@example.com"


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UIConfig]:
    graphs = GraphRegistry(registry={"whoami": whoami_config()})
    app = FastAPI()
    settings = Settings(GATEWAY_KEYS=json.dumps({LGOS_GATEWAY_KEY: "gateway"}))
    LanggraphOpenaiServe(graphs=graphs, app=app, settings=settings).bind_openai_api()
    files_settings = {"GATEWAY_KEYS": json.dumps({FILES_GATEWAY_KEY: "gateway"})}
    with (
        files_api_on_seaweedfs(
            tmp_path_factory.mktemp("seaweed"),
            bucket="lgos-chainlit-end-users",
            keys={"sk-chainlit-test-nobody": "nobody"},
            settings=files_settings,
        ) as files_api,
        ThreadServer(app) as server,
    ):
        yield UIConfig(
            GATEWAY_URL=f"{server.url}/v1",
            GATEWAY_KEY=LGOS_GATEWAY_KEY,
            CATALOG="lgos",
            FILES_URL=files_api.openai_url,
            FILES_KEY=FILES_GATEWAY_KEY,
            HOME=tmp_path_factory.mktemp("home"),
        )


@pytest.fixture
async def services(config: UIConfig) -> AsyncIterator[Services]:
    """The UI process's clients (each test runs on its own event loop)."""
    built = build_services(config)
    yield built
    await built.gateway.close()
    assert built.files is not None
    await built.files.close()


async def test_each_user_is_a_tenant_of_their_own(
    services: Services, tmp_path: Path
) -> None:
    alice, bob = services.for_user("alice"), services.for_user(BOB)
    graph = await LgosCatalog(alice.gateway).describe("whoami")
    store = ChatStore(tmp_path / "chats")
    chat = Conversation(
        alice.gateway,
        graph,
        ChatState(thread_id="t-alice", model="whoami"),
        store,
        alice.files,
        follow_client=alice.follow,
    )
    said = "".join(
        e.text for e in await collect(chat.send("who?")) if isinstance(e, AnswerDelta)
    )

    queued = await alice.gateway.responses.create(
        model="whoami", input="who?", background=True
    )

    async def done() -> bool:
        found = await alice.follow.responses.retrieve(queued.id)
        return found.status == "completed"

    await async_wait_until(done, within=30, what="Alice's background run")
    with pytest.raises(openai.NotFoundError):
        await bob.follow.responses.retrieve(queued.id)
    bobs = await bob.gateway.responses.create(model="whoami", input="who?")

    assert said == "scope=gateway.alice"
    assert bobs.output_text == f"scope=gateway.{end_user_id(BOB)}"
    assert end_user_id(BOB).startswith("u-")
    assert end_user_id(BOB) == end_user_id(BOB)


async def test_a_users_upload_is_theirs_alone(
    services: Services, tmp_path: Path
) -> None:
    alice, bob = services.for_user("alice"), services.for_user(BOB)
    assert alice.files is not None
    assert bob.files is not None
    csv = tmp_path / "sales.csv"
    csv.write_bytes(b"month,visitors\nJan,1\n")

    file_id = await alice.files.upload(csv, "sales.csv", "text/csv")
    name, _, content = await alice.files.download(file_id)
    with pytest.raises(FilesError, match="404"):
        await bob.files.download(file_id)

    assert (name, content) == ("sales.csv", b"month,visitors\nJan,1\n")
