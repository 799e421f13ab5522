"""Background runs followed live through the gateway's pass-through route.

The real LiteLLM proxy on the native stack's and on compose's configuration,
in front of a real LGOS server (the core library, one gated background graph,
in-process); every request through the official SDK. A run is created through
LiteLLM's ``/v1`` as any client does, and followed at
``{gateway}/lgos/v1/responses/{LGOS id}?stream=true`` with the id decoded from
the gateway's (Chainlit's decoder, and the Open WebUI Function's copy of it).

The graph writes a status, then waits for the test to open its gate before it
answers: events read while the gate is shut prove the route streams them as
they come (a buffering proxy would hold them until the run ended, which it
cannot do before the gate opens).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest
import yaml
from fastapi import FastAPI
from gateway_configs import (
    MASTER_KEY,
    REPO,
    compose_config,
    compose_file,
    native_config,
)
from langchain_core.messages import BaseMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    status_event,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_open_webui.bundle import function_sources
from lgos_stack.gateway import (
    _FOLLOW_SETTINGS,
    _SEED_CONFIG,
    FOLLOW_BASE_PATH,
    FOLLOW_TARGET_ENV,
    add_follow_route,
    litellm_config,
)
from lgos_testkit import ThreadServer, lgos_routes
from lgos_testkit.litellm import LiteLLM, litellm

pytestmark = pytest.mark.timeout(600)

STATUS = "Waiting at the gate"
GATE_SECONDS = 300.0
_gates: dict[str, threading.Event] = {}


def answer_to(said: str) -> str:
    return f"Answer to {said!r}, streamed word by word after the gate opened."


def gated_graph() -> Any:
    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        said = str(state["messages"][-1].content)
        get_stream_writer()(status_event(STATUS))
        gate = _gates.get(said)
        if gate is not None:
            await asyncio.to_thread(gate.wait, GATE_SECONDS)
        model = ScriptedChatModel(responder=lambda _: answer_to(said))
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile()


@dataclass(frozen=True)
class Gateway:
    proxy: LiteLLM
    lgos_url: str


@pytest.fixture(scope="module")
def lgos_url() -> Iterator[str]:
    graphs = GraphRegistry(
        registry={
            "gated": GraphConfig(
                graph=gated_graph(),
                description="Waits at a gate the test opens.",
                features={GraphFeature.BACKGROUND, GraphFeature.CLIENT_EVENTS},
            )
        }
    )
    app = FastAPI()
    LanggraphOpenaiServe(graphs=graphs, app=app).bind_openai_api()
    with ThreadServer(app) as server:
        yield f"{server.url}/v1"


@pytest.fixture(scope="module", params=["native", "compose"])
def gateway(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    lgos_url: str,
) -> Iterator[Gateway]:
    folder = tmp_path_factory.mktemp(request.param)
    write = native_config if request.param == "native" else compose_config
    config, env = write(folder, lgos_url, lgos_routes(lgos_url, ["gated"]))
    with litellm(config, MASTER_KEY, extra_env=env) as proxy:
        yield Gateway(proxy, lgos_url)


def sdk(base_url: str, key: str = MASTER_KEY) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=120)


def follow_sdk(gateway: Gateway, key: str = MASTER_KEY) -> openai.OpenAI:
    return sdk(gateway.proxy.url + FOLLOW_BASE_PATH, key)


def start_gated_run(gateway: Gateway, said: str) -> tuple[str, threading.Event]:
    """A background run created through LiteLLM, held at its gate: the
    gateway's id and the gate."""
    gate = _gates[said] = threading.Event()
    with sdk(gateway.proxy.openai_url) as client:
        queued = client.responses.create(
            model="lgos/gated", input=said, background=True
        )
    return queued.id, gate


def read_until_status(events: Iterator[Any]) -> list[Any]:
    """Events up to the status message's end (the graph then waits)."""
    seen = []
    for event in events:
        seen.append(event)
        if event.type == "response.output_item.done":
            return seen
    raise AssertionError(f"the stream ended before the status: {seen}")


def answer_text(events: list[Any]) -> str:
    return "".join(
        event.delta for event in events if event.type == "response.output_text.delta"
    )


def test_the_sdk_follows_a_background_run_live_through_the_gateway(gateway):
    said = "follow me live"
    gateway_id, gate = start_gated_run(gateway, said)
    lgos_id = upstream_response_id(gateway_id)

    with follow_sdk(gateway) as follow:
        stream = follow.responses.retrieve(lgos_id, stream=True)
        with stream:
            before = read_until_status(iter(stream))
            # The status came through while the run still waits at its gate.
            assert follow.responses.retrieve(lgos_id).status == "in_progress"
            gate.set()
            after = list(stream)

    assert gateway_id != lgos_id
    assert len(lgos_id) < 64
    assert before[0].response.id == lgos_id
    status = before[-1].item
    assert status.phase == "commentary"
    assert status.content[0].text == STATUS
    assert after[-1].type == "response.completed"
    assert after[-1].response.output_text.endswith(answer_to(said))
    assert answer_text(after) == answer_to(said)


def test_a_follow_that_disconnects_resumes_after_the_last_sequence(gateway):
    said = "drop and resume"
    gateway_id, gate = start_gated_run(gateway, said)
    lgos_id = upstream_response_id(gateway_id)

    with follow_sdk(gateway) as follow:
        with follow.responses.retrieve(lgos_id, stream=True) as first:
            shown = read_until_status(iter(first))
        # Disconnected; the run goes on once the gate opens.
        gate.set()
        last = shown[-1].sequence_number
        with follow.responses.retrieve(
            lgos_id, stream=True, starting_after=last
        ) as second:
            rest = list(second)

    numbers = [event.sequence_number for event in [*shown, *rest]]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert rest[0].sequence_number == last + 1
    assert rest[-1].type == "response.completed"
    assert answer_text(rest) == answer_to(said)


def test_a_run_is_cancelled_through_the_follow_route(gateway):
    gateway_id, gate = start_gated_run(gateway, "cancel me")
    lgos_id = upstream_response_id(gateway_id)

    try:
        with follow_sdk(gateway) as follow:
            cancelled = follow.responses.cancel(lgos_id)
            snapshot = follow.responses.retrieve(lgos_id)
    finally:
        gate.set()

    assert cancelled.status == "cancelled"
    assert snapshot.status == "cancelled"


@pytest.mark.parametrize("key", ["sk-not-the-master-key", ""])
def test_a_wrong_gateway_key_on_the_follow_route_is_a_401(gateway, key):
    answer = httpx.get(
        f"{gateway.proxy.url}{FOLLOW_BASE_PATH}/responses/resp_any",
        params={"stream": "true"},
        headers={"Authorization": f"Bearer {key}"} if key else {},
        timeout=60,
    )

    assert answer.status_code == 401
    assert "LITELLM_MASTER_KEY" in answer.json()["error"]["message"]


def test_the_function_decodes_gateway_ids_as_the_chainlit_ui_does(gateway):
    (source,) = [s for s in function_sources() if s.id == "lgos_responses"]
    function: dict[str, Any] = {}
    exec(compile(source.content, "lgos_responses.py", "exec"), function)
    gateway_id, gate = start_gated_run(gateway, "decode me")
    gate.set()

    decoded = function["upstream_response_id"](gateway_id)

    assert decoded == upstream_response_id(gateway_id) != gateway_id
    with follow_sdk(gateway) as follow:
        assert follow.responses.retrieve(decoded).id == decoded
    for other in ("resp_0123456789abcdef0123456789abcdef", "resp_qruE4-_x", "x"):
        assert function["upstream_response_id"](other) == other
        assert upstream_response_id(other) == other


def test_both_stacks_seed_the_same_follow_route(tmp_path):
    native_path, env = native_config(tmp_path, "http://127.0.0.1:8123/v1")
    native = yaml.safe_load(native_path.read_text())["general_settings"]
    compose = yaml.safe_load(
        (REPO / "compose" / "litellm" / "config.yaml").read_text()
    )["general_settings"]

    (native_route,) = native.pop("pass_through_endpoints")
    (compose_route,) = compose.pop("pass_through_endpoints")
    assert native == compose
    assert native["disable_responses_id_security"] is True
    assert native_route == compose_route
    assert native_route["target"] == f"os.environ/{FOLLOW_TARGET_ENV}"
    assert env[FOLLOW_TARGET_ENV] == "http://127.0.0.1:8123/v1/responses"
    # compose's target is the demo API as its model sync reaches it.
    services = compose_file()["services"]
    sync = services["model-sync"]["command"]
    deployment = sync[sync.index("--deployment") + 1]
    target = services["litellm"]["environment"][FOLLOW_TARGET_ENV]
    assert target == deployment.split(",")[1] + "/responses"
    assert native_route["path"] == FOLLOW_BASE_PATH + "/responses"
    assert native_route["auth"] is True


def test_a_config_seeded_before_the_follow_route_gets_it_once(tmp_path):
    config = litellm_config(tmp_path)
    config.parent.mkdir()
    older = _SEED_CONFIG.replace(_FOLLOW_SETTINGS, "")
    config.write_text(older + "# the user's own line\n")

    assert add_follow_route(config)
    once = config.read_text()
    assert not add_follow_route(config)
    assert config.read_text() == once
    settings = yaml.safe_load(once)["general_settings"]
    (route,) = settings["pass_through_endpoints"]
    assert route["path"] == "/lgos/v1/responses"
    assert settings["disable_responses_id_security"] is True
    assert once.endswith("# the user's own line\n")
    # The stack adds it at each start.
    config.write_text(older)
    native_config(tmp_path)
    assert "pass_through_endpoints" in config.read_text()


def test_a_config_with_its_own_pass_through_routes_is_left_alone(tmp_path):
    config = litellm_config(tmp_path)
    config.parent.mkdir()
    theirs = _SEED_CONFIG.replace(
        _FOLLOW_SETTINGS,
        "  pass_through_endpoints:\n    - path: /mine\n      target: http://x\n",
    )
    config.write_text(theirs)

    assert not add_follow_route(config)
    assert config.read_text() == theirs
