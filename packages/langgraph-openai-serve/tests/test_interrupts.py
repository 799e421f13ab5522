"""Human-in-the-loop interrupts over Responses, on every checkpointer and
coordinator backend (in memory and PostgreSQL)."""

from __future__ import annotations

import json
import uuid
from collections import Counter

import httpx
import openai
import pytest
from interrupt_graphs import (
    QUESTION,
    double_interrupt_graph,
    failing_graph,
    refund_graph,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.graph.coordination import InMemoryRunCoordinator
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator
from lgos_testkit.graphs import two_approvers_graph
from support import sse_events

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "postgres"])
async def backend(request, postgres_pool_factory, postgres_saver):
    if request.param == "memory":
        return InMemorySaver(), InMemoryRunCoordinator()
    pool = await postgres_pool_factory()
    return postgres_saver, PostgresRunCoordinator(pool, max_concurrent_leases=4)


@pytest.fixture
def runs():
    return Counter()


@pytest.fixture
def app_factory(backend, runs):
    saver, coordinator = backend

    def make(scope="tenant-a"):
        def interrupt_config(graph):
            return GraphConfig(
                graph=graph,
                description="refund approvals",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=coordinator,
            )

        registry = GraphRegistry(
            registry={
                "refund": interrupt_config(refund_graph(saver, runs)),
                "parallel": interrupt_config(two_approvers_graph(saver)),
                "greedy": interrupt_config(double_interrupt_graph(saver)),
                "broken": interrupt_config(failing_graph(saver)),
            }
        )
        return LanggraphOpenaiServe(
            graphs=registry, checkpoint_scope=lambda request: scope, settings=Settings()
        ).bind_openai_api()

    return make


def _client(server) -> openai.AsyncOpenAI:
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
    )


@pytest.fixture
def client(app_factory):
    return _client(app_factory())


def _answers(response, *outputs):
    calls = [item for item in response.output if item.type == "function_call"]
    return [
        {"type": "function_call_output", "call_id": call.call_id, "output": output}
        for call, output in zip(calls, outputs, strict=True)
    ]


async def _threads(backend) -> set[str]:
    saver, _ = backend
    return {c.config["configurable"]["thread_id"] async for c in saver.alist(None)}


async def test_pause_returns_an_lgos_interrupt_call_with_the_payload(client, backend):
    paused = await client.responses.create(model="refund", input="Refund order 7")

    assert paused.status == "completed"
    assert paused.id.startswith("resp_lg_")
    (call,) = paused.output
    assert (call.type, call.name) == ("function_call", "lgos_interrupt")
    assert json.loads(call.arguments) == QUESTION
    assert call.call_id.startswith("call_lg_")
    assert len(await _threads(backend)) == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_resume_completes_the_run_once_and_deletes_its_state(
    client, backend, runs, stream
):
    paused = await client.responses.create(model="refund", input="Refund order 7")

    if stream:
        response = await client._client.post(
            "/v1/responses",
            json={
                "model": "refund",
                "previous_response_id": paused.id,
                "input": _answers(paused, "approve"),
                "stream": True,
            },
        )
        events = sse_events(response.text)
        assert events[-1]["type"] == "response.completed"
        final = events[-1]["response"]
        text = final["output"][0]["content"][0]["text"]
        assert final["previous_response_id"] == paused.id
    else:
        resumed = await client.responses.create(
            model="refund",
            previous_response_id=paused.id,
            input=_answers(paused, "approve"),
        )
        text = resumed.output_text
        assert resumed.previous_response_id == paused.id

    assert text == "Refund approve."
    assert runs == Counter({"ask": 2, "answer": 1})  # the node restarts on resume
    assert await _threads(backend) == set()


async def test_streamed_pause_carries_the_call_as_typed_events(client):
    response = await client._client.post(
        "/v1/responses", json={"model": "refund", "input": "Refund", "stream": True}
    )

    events = sse_events(response.text)
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [(item["type"], item["name"]) for item in done] == [
        ("function_call", "lgos_interrupt")
    ]
    assert events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["id"].startswith("resp_lg_")


async def test_parallel_interrupts_are_answered_as_one_batch(client, backend):
    paused = await client.responses.create(model="parallel", input="Approve?")
    manager, finance = _answers(paused, "yes", "no")

    with pytest.raises(openai.ConflictError) as partial:
        await client.responses.create(
            model="parallel", previous_response_id=paused.id, input=[manager]
        )
    resumed = await client.responses.create(
        model="parallel", previous_response_id=paused.id, input=[manager, finance]
    )

    assert partial.value.body["code"] == "interrupt_state_conflict"
    questions = {json.loads(i.arguments)["question"] for i in paused.output}
    assert questions == {"Manager approval?", "Finance approval?"}
    assert resumed.output_text in {"manager=yes finance=no", "manager=no finance=yes"}
    assert await _threads(backend) == set()


async def test_replaying_a_finished_resume_conflicts_without_rerunning(client, runs):
    paused = await client.responses.create(model="refund", input="Refund")
    answers = _answers(paused, "approve")
    await client.responses.create(
        model="refund", previous_response_id=paused.id, input=answers
    )

    with pytest.raises(openai.ConflictError) as replay:
        await client.responses.create(
            model="refund", previous_response_id=paused.id, input=answers
        )

    assert replay.value.body["code"] == "interrupt_state_conflict"
    assert runs["answer"] == 1


async def test_another_scope_cannot_reach_the_paused_run(app_factory):
    tenant_a = _client(app_factory(scope="tenant-a"))
    tenant_b = _client(app_factory(scope="tenant-b"))
    paused = await tenant_a.responses.create(model="refund", input="Refund")

    with pytest.raises(openai.NotFoundError) as caught:
        await tenant_b.responses.create(
            model="refund",
            previous_response_id=paused.id,
            input=_answers(paused, "approve"),
        )
    resumed = await tenant_a.responses.create(
        model="refund",
        previous_response_id=paused.id,
        input=_answers(paused, "approve"),
    )

    assert caught.value.body["code"] == "response_not_found"
    assert resumed.output_text == "Refund approve."


async def test_lgos_run_id_makes_the_initial_request_retry_safe(client, runs):
    run_id = str(uuid.uuid4())

    first = await client.responses.create(
        model="refund", input="Refund", metadata={"lgos_run_id": run_id}
    )
    retry = await client.responses.create(
        model="refund", input="Refund", metadata={"lgos_run_id": run_id}
    )

    assert uuid.UUID(run_id).hex in first.id
    assert [c.call_id for c in retry.output] == [c.call_id for c in first.output]
    assert runs["ask"] == 1


async def test_a_held_lease_answers_409_run_busy(client, backend):
    _, coordinator = backend
    paused = await client.responses.create(model="refund", input="Refund")
    saver_threads = await _threads(backend)
    (thread_id,) = saver_threads

    async with coordinator.lease(thread_id):
        with pytest.raises(openai.ConflictError) as busy:
            await client.responses.create(
                model="refund",
                previous_response_id=paused.id,
                input=_answers(paused, "approve"),
            )

    assert busy.value.body["code"] == "run_busy"


async def test_failure_before_a_pause_leaves_no_state(client, backend):
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="broken", input="x")

    assert await _threads(backend) == set()


async def test_a_second_interrupt_in_a_resumed_node_is_rejected(client, backend):
    paused = await client.responses.create(model="greedy", input="x")

    with pytest.raises(openai.InternalServerError):
        await client.responses.create(
            model="greedy",
            previous_response_id=paused.id,
            input=_answers(paused, "one"),
        )

    assert await _threads(backend) == set()


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (
            {
                "previous_response_id": "resp_123",
                "input": [
                    {
                        "type": "function_call_output",
                        "call_id": "call_lg_x",
                        "output": "y",
                    }
                ],
            },
            "previous_response_id",
        ),
        ({"input": []}, "input"),
        (
            {
                "instructions": "new",
                "input": [
                    {
                        "type": "function_call_output",
                        "call_id": "call_lg_x",
                        "output": "y",
                    }
                ],
            },
            "instructions",
        ),
        ({"input": [{"role": "user", "content": "hi"}]}, "input[0]"),
        (
            {
                "input": [
                    {"type": "function_call_output", "call_id": "call_1", "output": "y"}
                ]
            },
            "input[0].call_id",
        ),
        ({"input": "approve"}, "input"),
    ],
)
async def test_malformed_resumes_are_400(client, body, param):
    paused = await client.responses.create(model="refund", input="Refund")
    request = {"model": "refund", "previous_response_id": paused.id, **body}

    with pytest.raises(openai.BadRequestError) as caught:
        await client.post("/responses", body=request, cast_to=object)

    assert caught.value.body["param"] == param


async def test_answers_without_previous_response_id_are_rejected(client):
    paused = await client.responses.create(model="refund", input="Refund")
    replay = [
        {"role": "user", "content": "Refund"},
        *[item.model_dump() for item in paused.output],
        *_answers(paused, "approve"),
    ]

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="refund", input=replay)

    assert caught.value.body["param"] == "previous_response_id"


async def test_a_nil_run_id_is_rejected(client):
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="refund", input="x", metadata={"lgos_run_id": str(uuid.UUID(int=0))}
        )

    assert caught.value.body["param"] == "metadata.lgos_run_id"


async def test_answered_interrupts_replay_later_as_ordinary_input(client, backend):
    paused = await client.responses.create(model="refund", input="Refund")
    answers = _answers(paused, "approve")
    resumed = await client.responses.create(
        model="refund", previous_response_id=paused.id, input=answers
    )
    transcript = [
        {"role": "user", "content": "Refund"},
        *[item.model_dump() for item in paused.output],
        *answers,
        *[item.model_dump() for item in resumed.output],
        {"role": "user", "content": "Another refund"},
    ]

    follow_up = await client.responses.create(model="refund", input=transcript)

    (call,) = follow_up.output
    assert call.name == "lgos_interrupt"
    assert follow_up.id != paused.id
