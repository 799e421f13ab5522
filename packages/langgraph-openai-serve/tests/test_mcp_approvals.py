"""Interrupts presented as MCP approvals (``interrupt_protocol="mcp_approval"``):
``mcp_approval_request`` items, resumed by ``mcp_approval_response`` with
``previous_response_id``; a rejection fails the turn with
``interrupt_rejected`` and ends the run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import httpx
import openai
import pytest
from agents import (
    Agent,
    HostedMCPTool,
    MCPToolApprovalFunctionResult,
    MCPToolApprovalRequest,
    ModelBehaviorError,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from conftest import LiveServer
from interrupt_graphs import REFUND, approval_graph
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from pydantic import ValidationError
from support import scripted_graph, sse_events

pytestmark = pytest.mark.anyio

LGOS_APPROVALS = {"type": "mcp", "server_label": "lgos", "require_approval": "always"}


@pytest.fixture
def runs() -> Counter[str]:
    return Counter()


@pytest.fixture
def client(runs) -> openai.AsyncOpenAI:
    def interrupt_config(protocol: str) -> GraphConfig:
        return GraphConfig(
            graph=approval_graph(InMemorySaver(), runs),
            description="refunds after approval",
            features={GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND},
            run_coordinator=InMemoryRunCoordinator(),
            interrupt_protocol=protocol,
        )

    registry = GraphRegistry(
        registry={
            "approvals": interrupt_config("mcp_approval"),
            "calls": interrupt_config("function_call"),
            "plain": GraphConfig(graph=scripted_graph("Hi."), description="plain"),
        }
    )
    server = LanggraphOpenaiServe(registry, settings=Settings()).bind_openai_api()
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
    )


def _response(request, *, approve: bool = True, reason: str | None = None) -> dict:
    answer = {
        "type": "mcp_approval_response",
        "approval_request_id": request.id,
        "approve": approve,
    }
    if reason is not None:
        answer["reason"] = reason
    return answer


async def test_a_pause_is_presented_as_mcp_approval_requests(client):
    paused = await client.responses.create(
        model="approvals", input="Refund order 7", tools=[LGOS_APPROVALS]
    )

    (request,) = paused.output
    assert request.type == "mcp_approval_request"
    assert request.id.startswith("mcpr_lg_")
    assert (request.server_label, request.name) == ("lgos", "refund")
    assert json.loads(request.arguments) == REFUND
    assert paused.status == "completed"
    assert paused.id.startswith("resp_lg_")


async def test_discovery_names_each_interrupt_graphs_presentation(client):
    approvals = await client.models.retrieve("approvals")
    calls = await client.models.retrieve("calls")
    plain = await client.models.retrieve("plain")

    assert approvals.model_extra["lgos"]["interrupt_protocol"] == "mcp_approval"
    assert calls.model_extra["lgos"]["interrupt_protocol"] == "function_call"
    assert "interrupt_protocol" not in plain.model_extra["lgos"]


async def test_an_approval_resumes_the_interrupt_with_its_own_value(client, runs):
    paused = await client.responses.create(model="approvals", input="Refund order 7")

    resumed = await client.responses.create(
        model="approvals",
        previous_response_id=paused.id,
        input=[_response(paused.output[0])],
        tools=[LGOS_APPROVALS],
    )

    assert resumed.output_text == "Refunded order 7 (19.90 EUR)."
    assert resumed.previous_response_id == paused.id
    assert runs == Counter(refund=2, report=1)


async def test_a_rejection_fails_the_turn_and_ends_the_run(client, runs):
    paused = await client.responses.create(model="approvals", input="Refund order 7")
    rejection = [_response(paused.output[0], approve=False, reason="Not eligible.")]

    failed = await client.responses.create(
        model="approvals", previous_response_id=paused.id, input=rejection
    )
    with pytest.raises(openai.ConflictError) as again:
        await client.responses.create(
            model="approvals",
            previous_response_id=paused.id,
            input=[_response(paused.output[0])],
        )

    assert failed.status == "failed"
    assert (failed.error.code, failed.error.message) == (
        "interrupt_rejected",
        "Not eligible.",
    )
    assert failed.output == []
    assert failed.previous_response_id == paused.id
    assert runs == Counter(refund=1)  # the graph did not run again
    assert again.value.body["code"] == "interrupt_state_conflict"


async def test_a_streamed_rejection_ends_with_response_failed(client):
    paused = await client.responses.create(model="approvals", input="Refund order 7")

    stream = await client.responses.create(
        model="approvals",
        previous_response_id=paused.id,
        input=[_response(paused.output[0], approve=False)],
        stream=True,
    )
    events = [event async for event in stream]

    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.failed",
    ]
    assert events[-1].response.error.code == "interrupt_rejected"


async def test_streaming_emits_the_items_added_and_done_events(client):
    response = await client._client.post(
        "/v1/responses",
        json={"model": "approvals", "input": "Refund order 7", "stream": True},
    )
    events = sse_events(response.text)

    kinds = [e["type"] for e in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    added, done, completed = events[2], events[3], events[4]
    assert added["item"] == done["item"] == completed["response"]["output"][0]
    assert added["item"]["type"] == "mcp_approval_request"
    assert json.loads(added["item"]["arguments"]) == REFUND


async def test_a_background_run_presents_its_pause_as_approvals(client):
    stream = await client.responses.create(
        model="approvals", input="Refund order 7", background=True, stream=True
    )
    events = [event async for event in stream]

    (request,) = events[-1].response.output
    assert events[-1].type == "response.completed"
    assert request.type == "mcp_approval_request"


async def test_an_approval_can_resume_the_run_in_the_background(client, runs):
    paused = await client.responses.create(model="approvals", input="Refund order 7")

    stream = await client.responses.create(
        model="approvals",
        previous_response_id=paused.id,
        input=[_response(paused.output[0])],
        background=True,
        stream=True,
    )
    events = [event async for event in stream]

    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Refunded order 7 (19.90 EUR)."
    assert runs == Counter(refund=2, report=1)


@pytest.mark.parametrize(
    ("approval_request_id", "status", "param"),
    [
        ("call_lg_0123", 400, "input[0].approval_request_id"),
        ("mcpr_lg_not-pending", 409, "input"),
    ],
)
async def test_a_wrong_approval_request_id_names_the_param(
    client, approval_request_id, status, param
):
    paused = await client.responses.create(model="approvals", input="Refund order 7")
    answer = {
        "type": "mcp_approval_response",
        "approval_request_id": approval_request_id,
        "approve": True,
    }

    with pytest.raises(openai.APIStatusError) as caught:
        await client.responses.create(
            model="approvals", previous_response_id=paused.id, input=[answer]
        )

    assert caught.value.status_code == status
    assert caught.value.body["param"] == param


@pytest.mark.parametrize(
    ("model", "body", "param"),
    [
        # A function_call_output cannot answer an approval request ...
        (
            "approvals",
            {
                "input": [
                    {"type": "function_call_output", "call_id": "c", "output": "x"}
                ]
            },
            "input[0]",
        ),
        # ... nor an approval a function call, and a rejection cannot wait.
        ("calls", {"input": [{"type": "mcp_approval_response"}]}, "input[0]"),
        (
            "approvals",
            {"background": True, "input": [{"type": "mcp_approval_response"}]},
            "background",
        ),
    ],
)
async def test_resumes_in_the_other_presentation_are_rejected(
    client, model, body, param
):
    paused = await client.responses.create(model=model, input="Refund order 7")
    for item in body["input"]:
        if item["type"] == "mcp_approval_response":
            item.update(approval_request_id=f"mcpr_lg_{'0' * 8}", approve=False)

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model=model, previous_response_id=paused.id, **body
        )

    assert caught.value.body["param"] == param


async def test_an_approval_without_previous_response_id_is_refused(client):
    answer = {
        "type": "mcp_approval_response",
        "approval_request_id": "x",
        "approve": True,
    }

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="approvals", input=[answer])
    with pytest.raises(openai.BadRequestError) as plain:
        await client.responses.create(model="plain", input=[answer])

    assert caught.value.body["param"] == "previous_response_id"
    assert plain.value.body["param"] == "input[0]"


@pytest.mark.parametrize(
    ("model", "tool", "param"),
    [
        ("plain", LGOS_APPROVALS, "tools[0].type"),
        ("calls", LGOS_APPROVALS, "tools[0].type"),
        (
            "approvals",
            {**LGOS_APPROVALS, "server_label": "other"},
            "tools[0].server_label",
        ),
        (
            "approvals",
            {**LGOS_APPROVALS, "require_approval": "never"},
            "tools[0].require_approval",
        ),
        (
            "approvals",
            {**LGOS_APPROVALS, "server_url": "https://mcp.example"},
            "tools[0].server_url",
        ),
    ],
)
async def test_mcp_tools_only_declare_this_models_approvals(client, model, tool, param):
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=model, input="Hi", tools=[tool])

    assert caught.value.body["param"] == param


def test_the_protocol_is_an_interrupt_option():
    with pytest.raises(ValidationError, match="interrupt_protocol requires"):
        GraphConfig(
            graph=scripted_graph("x"),
            description="d",
            interrupt_protocol="mcp_approval",
        )
    with pytest.raises(ValidationError, match="interrupt_protocol"):
        GraphConfig(
            graph=approval_graph(InMemorySaver(), Counter()),
            description="d",
            features={GraphFeature.INTERRUPTS},
            run_coordinator=InMemoryRunCoordinator(),
            interrupt_protocol="elicitation",
        )


# --- the OpenAI Agents SDK, unchanged, against a real server -----------------


@pytest.fixture(scope="module")
def approval_server(tmp_path_factory) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path_factory.mktemp("approvals"), factory="approval_app:create_app"
    )
    yield server
    server.stop()


def _agent(base_url: str, decide) -> tuple[Agent, openai.AsyncOpenAI]:
    set_tracing_disabled(True)  # otherwise the SDK uploads traces to OpenAI
    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)
    agent = Agent(
        name="refunds",
        model=OpenAIResponsesModel(model="refunds", openai_client=client),
        tools=[HostedMCPTool(tool_config=LGOS_APPROVALS, on_approval_request=decide)],
    )
    return agent, client


async def test_agents_sdk_approval_callback_completes_the_loop(approval_server):
    asked: list[tuple[str, str, dict]] = []

    def approve(request: MCPToolApprovalRequest) -> MCPToolApprovalFunctionResult:
        data = request.data
        asked.append((data.server_label, data.name, json.loads(data.arguments)))
        return {"approve": True}

    agent, client = _agent(approval_server.base_url, approve)
    async with client:
        result = await Runner.run(
            agent, "Refund order 7", auto_previous_response_id=True
        )

    assert asked == [("lgos", "refund", REFUND)]
    assert result.final_output == "Refunded order 7 (19.90 EUR)."
    kinds = [item.type for item in result.new_items]
    assert kinds == [
        "mcp_approval_request_item",
        "mcp_approval_response_item",
        "message_output_item",
    ]


async def test_agents_sdk_rejection_surfaces_interrupt_rejected(approval_server):
    def reject(request: MCPToolApprovalRequest) -> MCPToolApprovalFunctionResult:
        return {"approve": False, "reason": "Not eligible."}

    agent, client = _agent(approval_server.base_url, reject)
    async with client:
        with pytest.raises(ModelBehaviorError, match="interrupt_rejected") as caught:
            await Runner.run(agent, "Refund order 7", auto_previous_response_id=True)

    assert "Not eligible." in str(caught.value)
