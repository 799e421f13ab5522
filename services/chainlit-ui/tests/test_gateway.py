"""The catalog, from LGOS directly and from a real LiteLLM proxy, and chats
routed through LiteLLM the way the stack runs them: the proxy runs on the
stack's own gateway configuration (its custom auth, its follow route to LGOS
for background runs), with the model list the model sync would write."""

from __future__ import annotations

import httpx
import pytest
import yaml
from lgos_chainlit.catalog import (
    CatalogError,
    GraphInfo,
    LgosCatalog,
    LiteLLMCatalog,
    graph_info,
)
from lgos_chainlit.chats import ChatState
from lgos_chainlit.config import UIConfig
from lgos_chainlit.conversation import Conversation
from lgos_chainlit.events import (
    AnswerDelta,
    AnswerReplaced,
    BackgroundEnded,
    BackgroundStarted,
    CommentaryDelta,
    CommentaryDone,
    InterruptAsked,
    Notice,
    TurnFinished,
)
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_chainlit.run_follower import NO_EVENTS_NOTICE
from lgos_stack.gateway import (
    FOLLOW_TARGET_ENV,
    install_gateway_modules,
    seed_config,
)
from lgos_testkit import lgos_routes, litellm
from openai import AsyncOpenAI
from ui_lgos_app import background_answer
from ui_support import LITELLM_MASTER_KEY, RecordingTransport, collect

pytestmark = pytest.mark.anyio

GATEWAY_MODELS = ("echo", "refund", "tools", "background")


@pytest.fixture(scope="session")
def gateway_proxy(lgos, tmp_path_factory):
    """LiteLLM on the stack's seed configuration, routing ``lgos/<id>`` to
    LGOS, with ``model_info.lgos`` copied from ``GET /v1/models/{id}`` as the
    model-sync job writes it, plus ``bare/plain`` without the extension."""
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
    config = tmp_path_factory.mktemp("litellm") / "config.yaml"
    seed_config(config)
    install_gateway_modules(config.parent)
    document = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump(document | {"model_list": entries}))
    target = {FOLLOW_TARGET_ENV: f"{lgos.base_url}/responses"}
    with litellm(config, LITELLM_MASTER_KEY, extra_env=target) as proxy:
        yield proxy


@pytest.fixture(scope="session")
def gateway(gateway_proxy):
    return gateway_proxy.openai_url


def follow_url(gateway_proxy) -> str:
    """The follow route, as the UI derives it from its gateway URL."""
    config = UIConfig(GATEWAY_URL=gateway_proxy.openai_url, CATALOG="litellm")
    return config.follow_url


class FollowClient(AsyncOpenAI):
    """The UI's follow client, over real HTTP, noting the paths it asked for."""

    paths: list[str]


@pytest.fixture
async def follow_client(gateway_proxy):
    paths: list[str] = []

    async def note(request: httpx.Request) -> None:
        paths.append(request.url.path)

    async with httpx.AsyncClient(timeout=30, event_hooks={"request": [note]}) as http:
        sdk = FollowClient(
            base_url=follow_url(gateway_proxy),
            api_key=LITELLM_MASTER_KEY,
            max_retries=0,
            http_client=http,
        )
        sdk.paths = paths
        yield sdk


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
        with pytest.raises(CatalogError, match=r"answered 401"):
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
    chat.runs.poll_interval = 0.1
    return chat


async def test_without_the_follow_route_a_background_run_is_polled_to_its_answer(
    gateway_client, litellm_catalog, store, thread_id
):
    # LiteLLM's own ``GET /v1/responses/{id}?stream=true`` answers with the
    # JSON snapshot: no events, so a UI without the follow route reads the
    # snapshot (polling while the run goes) and shows the whole answer when
    # the run ends.
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


async def _followed_chat(
    litellm_catalog, gateway_client, follow_client, store, thread_id
):
    """A background chat as the UI builds it: requests through LiteLLM's
    ``/v1``, the run followed through the gateway's follow route."""
    graph = await litellm_catalog.describe("lgos/background")
    state = store.load(thread_id) or ChatState(thread_id, graph.model, background=True)
    return Conversation(
        gateway_client, graph, state, store, follow_client=follow_client
    )


def _shown_text(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


async def test_a_background_run_through_the_gateway_streams_progress_and_answer(
    gateway_client, litellm_catalog, follow_client, store, thread_id
):
    chat = await _followed_chat(
        litellm_catalog, gateway_client, follow_client, store, thread_id
    )

    events = await collect(chat.send("live through the gateway"))

    started = events[0]
    assert isinstance(started, BackgroundStarted)
    # Followed on the route by LGOS's id, not LiteLLM's long one.
    lgos_id = upstream_response_id(started.response_id)
    assert lgos_id != started.response_id
    assert len(lgos_id) < 64
    assert set(follow_client.paths) == {f"/lgos/v1/responses/{lgos_id}"}
    commentary = "".join(e.text for e in events if isinstance(e, CommentaryDelta))
    assert commentary == "Working in the background"
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert answer == background_answer("live through the gateway", 1)
    assert not any(isinstance(e, AnswerReplaced) for e in events)
    assert _shown_text(events) == []  # no "no live events" notice
    ended = next(e for e in events if isinstance(e, BackgroundEnded))
    assert ended.status == "completed"
    state = store.load(thread_id)
    assert state.running is None
    assert state.items[-1]["content"][0]["text"] == answer

    # The next turn goes through LiteLLM again, with the whole ledger.
    again = await collect(chat.send("again"))
    answer = "".join(e.text for e in again if isinstance(e, AnswerDelta))
    assert answer == background_answer("again", 4)


async def test_a_follow_through_the_gateway_resumes_after_a_drop_without_gaps(
    gateway_proxy, gateway_client, litellm_catalog, store, thread_id
):
    transport = RecordingTransport(cut_after=6)
    async with httpx.AsyncClient(transport=transport, timeout=30) as http:
        follow = AsyncOpenAI(
            base_url=follow_url(gateway_proxy),
            api_key=LITELLM_MASTER_KEY,
            max_retries=0,
            http_client=http,
        )
        chat = await _followed_chat(
            litellm_catalog, gateway_client, follow, store, thread_id
        )

        events = await collect(chat.send("drop me at the gateway"))

    first, second = transport.stream_queries[:2]
    assert first["starting_after"] == "-1"
    assert int(second["starting_after"]) >= 5
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert answer == background_answer("drop me at the gateway", 1)
    assert not any(isinstance(e, AnswerReplaced) for e in events)
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "completed"


async def test_a_background_run_through_the_gateway_is_cancelled(
    gateway_client, litellm_catalog, follow_client, store, thread_id
):
    chat = await _followed_chat(
        litellm_catalog, gateway_client, follow_client, store, thread_id
    )

    events = []
    async for event in chat.send("slow, cancel me at the gateway"):
        events.append(event)
        if isinstance(event, BackgroundStarted):
            assert await collect(chat.cancel()) == []

    ended = next(e for e in events if isinstance(e, BackgroundEnded))
    assert ended.status == "cancelled"
    assert store.load(thread_id).items == []


async def test_a_gateway_without_the_follow_route_is_polled_instead(
    gateway_proxy, gateway_client, litellm_catalog, store, thread_id
):
    # The same LiteLLM, but the UI pointed at a path it does not serve: what
    # a gateway configured before the follow route answers (404 "Not Found").
    async with AsyncOpenAI(
        base_url=f"{gateway_proxy.url}/no-route/v1",
        api_key=LITELLM_MASTER_KEY,
        max_retries=0,
        timeout=30,
    ) as missing:
        chat = await _followed_chat(
            litellm_catalog, gateway_client, missing, store, thread_id
        )
        chat.runs.poll_interval = 0.1

        events = await collect(chat.send("no route here"))

    (replaced,) = [e for e in events if isinstance(e, AnswerReplaced)]
    assert replaced.text == background_answer("no route here", 1)
    assert _shown_text(events) == [NO_EVENTS_NOTICE]
    (finished,) = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.status == "completed"
    assert chat.runs.follow_client is None  # the chat polls from now on


def test_the_follow_route_is_derived_from_the_gateway_url():
    through_litellm = UIConfig(GATEWAY_URL="http://gw:4000/v1", CATALOG="litellm")
    direct = UIConfig(GATEWAY_URL="http://lgos:8000/v1", CATALOG="lgos")
    chosen = UIConfig(
        GATEWAY_URL="http://gw:4000/v1", FOLLOW_URL="http://lgos:8000/v1/"
    )

    assert through_litellm.follow_url == "http://gw:4000/lgos/v1"
    assert direct.follow_url == "http://lgos:8000/v1"
    assert chosen.follow_url == "http://lgos:8000/v1"
