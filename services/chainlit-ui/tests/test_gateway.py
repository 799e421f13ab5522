"""The catalog, from LGOS directly and from a real LiteLLM proxy, and chats
routed through LiteLLM the way the stack runs them."""

from __future__ import annotations

import httpx
import pytest
from lgos_chainlit.catalog import (
    CatalogError,
    GraphInfo,
    LgosCatalog,
    LiteLLMCatalog,
    graph_info,
)
from lgos_chainlit.chats import ChatState
from lgos_chainlit.conversation import Conversation
from lgos_chainlit.events import (
    AnswerDelta,
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    CommentaryDone,
    InterruptAsked,
    TurnFinished,
)
from lgos_testkit import lgos_routes, litellm, litellm_config
from openai import AsyncOpenAI
from ui_lgos_app import background_answer
from ui_support import LITELLM_MASTER_KEY, collect

pytestmark = pytest.mark.anyio

GATEWAY_MODELS = ("echo", "refund", "tools", "background")


@pytest.fixture(scope="session")
def gateway(lgos, tmp_path_factory):
    """LiteLLM routing ``lgos/<id>`` to LGOS, with ``model_info.lgos`` copied
    from ``GET /v1/models/{id}`` as the model-sync job writes it, plus
    ``bare/plain`` without the extension."""
    entries = lgos_routes(lgos.base_url, GATEWAY_MODELS)
    entries.append(
        {
            "model_name": "bare/plain",
            "litellm_params": {
                "model": "openai/plain",
                "api_base": lgos.base_url,
                "api_key": "no-key",
            },
        }
    )
    config = tmp_path_factory.mktemp("litellm") / "litellm.yaml"
    config.write_text(litellm_config(entries))
    with litellm(config, LITELLM_MASTER_KEY) as proxy:
        yield proxy.openai_url


@pytest.fixture
async def gateway_client(gateway):
    sdk = AsyncOpenAI(
        base_url=gateway, api_key=LITELLM_MASTER_KEY, max_retries=0, timeout=30
    )
    yield sdk
    await sdk.close()


@pytest.fixture
async def litellm_catalog(gateway):
    async with httpx.AsyncClient(timeout=30) as http:
        yield LiteLLMCatalog(http, gateway, LITELLM_MASTER_KEY)


async def test_lgos_lists_every_graph_and_details_the_selected_one(client):
    catalog = LgosCatalog(client)

    graphs = {graph.model: graph for graph in await catalog.list_graphs()}
    echo = await catalog.describe("echo")

    assert graphs["echo"].description == "Echoes settings and what it saw."
    assert graphs["echo"].client_settings is None  # the list stays light
    assert echo.client_settings["defaults"]["audience"] == "general"
    assert graphs["refund"].features == {"client_events", "interrupts"}
    assert graphs["tools"].server_tools == ("package_version", "web_search")
    assert graphs["chart"].client_tools == ("display_file",)
    assert graphs["chart"].supports("file_inputs")
    assert not any(graph.limited for graph in graphs.values())


async def test_an_unknown_model_is_a_catalog_error(client):
    with pytest.raises(CatalogError, match="missing"):
        await LgosCatalog(client).describe("missing")


async def test_litellm_model_info_carries_the_complete_extension(litellm_catalog):
    graphs = {graph.model: graph for graph in await litellm_catalog.list_graphs()}
    echo = await litellm_catalog.describe("lgos/echo")

    assert set(graphs) == {
        "lgos/echo",
        "lgos/refund",
        "lgos/tools",
        "lgos/background",
        "bare/plain",
    }
    assert echo.description == "Echoes settings and what it saw."
    assert echo.client_settings["json_schema"]["properties"]["depth"]["maximum"] == 5
    assert graphs["lgos/tools"].server_tools == ("package_version", "web_search")
    assert graphs["bare/plain"] == GraphInfo(model="bare/plain", limited=True)


async def test_a_gateway_that_strips_the_extension_means_limited_graphs(
    gateway_client,
):
    graphs = await LgosCatalog(gateway_client).list_graphs()

    assert graphs
    assert all(graph.limited for graph in graphs)
    assert graphs[0] == GraphInfo(model=graphs[0].model, limited=True)


async def test_a_wrong_key_is_a_catalog_error(gateway):
    async with httpx.AsyncClient(timeout=30) as http:
        catalog = LiteLLMCatalog(http, gateway, "sk-wrong")
        # Without a database LiteLLM answers 400 ("No connected db") here.
        with pytest.raises(CatalogError, match=r"answered 4\d\d"):
            await catalog.list_graphs()


async def test_chats_through_litellm_keep_settings_commentary_and_history(
    gateway_client, litellm_catalog, store, thread_id
):
    graph = await litellm_catalog.describe("lgos/echo")
    state = ChatState(thread_id=thread_id, model=graph.model, settings={"depth": 4})
    chat = Conversation(gateway_client, graph, state, store)

    first = await collect(chat.send("hi"))
    second = await collect(chat.send("again"))

    assert [e.text for e in first if isinstance(e, CommentaryDone)] == [
        "Reading your message"
    ]
    answer = "".join(e.text for e in second if isinstance(e, AnswerDelta))
    assert f"depth=4 signature=LGOS conversation={thread_id} seen=4" in answer


async def test_interrupts_resume_through_litellm(
    gateway_client, litellm_catalog, store, thread_id
):
    graph = await litellm_catalog.describe("lgos/refund")
    chat = Conversation(gateway_client, graph, ChatState(thread_id, graph.model), store)

    (asked,) = [
        e for e in await collect(chat.send("refund")) if isinstance(e, InterruptAsked)
    ]
    events = await collect(chat.answer(asked.prompt.call_id, "approve"))

    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert answer == "Refund approve.", events


async def _background_chat(litellm_catalog, gateway_client, store, thread_id):
    graph = await litellm_catalog.describe("lgos/background")
    state = ChatState(thread_id, graph.model, background=True)
    chat = Conversation(gateway_client, graph, state, store)
    chat.poll_interval = 0.1
    return chat


async def test_a_background_run_through_litellm_is_polled_to_its_answer(
    gateway_client, litellm_catalog, store, thread_id
):
    # LiteLLM answers ``GET /responses/{id}?stream=true`` with the JSON
    # snapshot: no events, so the follower reads the snapshot (polling while
    # the run goes) and shows the whole answer when the run ends.
    chat = await _background_chat(litellm_catalog, gateway_client, store, thread_id)

    events = await collect(chat.send("slow, through the gateway"))

    (replaced,) = [e for e in events if isinstance(e, AnswerReplaced)]
    assert replaced.text == background_answer("slow, through the gateway", 1)
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "completed"
    state = store.load(thread_id)
    assert state.running is None
    assert state.items[-1]["content"][0]["text"] == replaced.text


async def test_a_background_run_through_litellm_is_cancelled(
    gateway_client, litellm_catalog, store, thread_id
):
    chat = await _background_chat(litellm_catalog, gateway_client, store, thread_id)

    events = []
    async for event in chat.send("slow, please"):
        events.append(event)
        if isinstance(event, BackgroundStarted):
            # The Cancel button, pressed as soon as it is shown.
            assert await collect(chat.cancel()) == []

    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "cancelled"
    ended = next(e for e in events if isinstance(e, BackgroundEnded))
    assert ended.status == "cancelled"
    assert not any(isinstance(e, AnswerDelta) for e in events)
    state = store.load(thread_id)
    assert state.running is None
    assert state.items == []


def test_malformed_extensions_degrade_field_by_field():
    info = graph_info(
        "m",
        {
            "description": 3,
            "features": ["interrupts", 7, "future_feature"],
            "server_tools": "web_search",
            "client_settings": {"json_schema": "nope"},
        },
    )

    assert info == GraphInfo(
        model="m", features=frozenset({"interrupts", "future_feature"})
    )
    assert graph_info("m", None).limited
