"""Background Responses with the in-process backend, through the SDK."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import httpx
import openai
import pytest
from interrupt_graphs import refund_graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.backends.memory import MemoryBackend
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.graph.checkpoint_keys import checkpoint_key
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    run_id_from_response_id,
)
from langgraph_openai_serve.responses.protocol import BackgroundJob
from lgos_testkit import await_response
from support import one_node_graph, scripted_graph, sse_events

pytestmark = pytest.mark.anyio


class Gate:
    """Lets a test hold a graph run open and see it cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def node(self, state):
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return {"messages": [AIMessage(content="released")]}


@pytest.fixture
def gate():
    return Gate()


@pytest.fixture
def runs():
    return Counter()


@pytest.fixture
def saver():
    """The refund graph's checkpoints."""
    return InMemorySaver()


@pytest.fixture
def client(gate, runs, saver):
    background = {GraphFeature.BACKGROUND}
    interrupt_features = {GraphFeature.BACKGROUND, GraphFeature.INTERRUPTS}
    registry = GraphRegistry(
        registry={
            "bg": GraphConfig(
                graph=scripted_graph(responder=lambda _: "Long work is done."),
                description="background",
                features=background,
            ),
            "gated": GraphConfig(
                graph=one_node_graph(gate.node),
                description="gated",
                features=background,
            ),
            "failing": GraphConfig(
                graph=scripted_graph(RuntimeError("secret")),
                description="fails",
                features=background,
            ),
            "foreground": GraphConfig(graph=scripted_graph("x"), description="fg"),
            "refund": GraphConfig(
                graph=refund_graph(saver, runs),
                description="refund",
                features=interrupt_features,
                run_coordinator=InMemoryRunCoordinator(),
            ),
        }
    )
    server = LanggraphOpenaiServe(
        graphs=registry,
        checkpoint_scope=lambda request: request.headers.get("x-tenant", "default"),
        settings=Settings(),
        backend=MemoryBackend(concurrency=1),
    ).bind_openai_api()
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
    )


async def test_submit_returns_queued_then_polling_reaches_the_foreground_output(client):
    foreground = await client.responses.create(model="bg", input="Go")
    queued = await client.responses.create(model="bg", input="Go", background=True)

    done = await await_response(client, queued.id, {"completed"})

    assert queued.status == "queued"
    assert queued.background is True
    assert done.output_text == foreground.output_text == "Long work is done."
    assert done.usage.output_tokens == foreground.usage.output_tokens


async def test_cancel_while_running_cancels_the_graph_task(client, gate):
    submitted = await client.responses.create(
        model="gated", input="Go", background=True
    )
    await asyncio.wait_for(gate.entered.wait(), 30)

    cancelled = await client.responses.cancel(submitted.id)
    again = await client.responses.cancel(submitted.id)

    assert cancelled.status == "cancelled"
    assert again.status == "cancelled"
    assert gate.cancelled.is_set()


async def test_cancel_while_queued_never_starts_the_run(client, gate):
    blocker = await client.responses.create(model="gated", input="Go", background=True)
    await asyncio.wait_for(gate.entered.wait(), 30)
    queued = await client.responses.create(model="bg", input="Go", background=True)

    cancelled = await client.responses.cancel(queued.id)
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    # One run at a time, in order: once a later run is done, the cancelled
    # one would have run before it.
    later = await client.responses.create(model="bg", input="Go", background=True)
    await await_response(client, later.id, {"completed"})

    assert cancelled.status == "cancelled"
    assert (await client.responses.retrieve(queued.id)).status == "cancelled"


async def test_a_raising_run_ends_failed_with_the_error_envelope(client):
    submitted = await client.responses.create(
        model="failing", input="Go", background=True
    )

    failed = await await_response(client, submitted.id, {"failed"})

    assert failed.error.code == "server_error"
    assert failed.error.message == "Internal server error"


async def test_idempotency_key_returns_the_original_and_rejects_another_body(
    client, runs
):
    headers = {"Idempotency-Key": "order-42"}
    first = await client.responses.create(
        model="bg", input="Go", background=True, extra_headers=headers
    )
    retry = await client.responses.create(
        model="bg", input="Go", background=True, extra_headers=headers
    )
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        await client.responses.create(
            model="bg", input="Something else", background=True, extra_headers=headers
        )

    assert retry.id == first.id
    assert reused.value.body["code"] == "idempotency_key_reused"


async def test_resumed_stream_yields_exactly_the_missing_events(client, gate):
    submitted = await client.responses.create(model="bg", input="Go", background=True)
    done = await await_response(client, submitted.id, {"completed"})
    full = await client._client.get(
        f"/v1/responses/{submitted.id}", params={"stream": "true"}
    )
    events = sse_events(full.text)
    cut = 3

    resumed = await client._client.get(
        f"/v1/responses/{submitted.id}",
        params={"stream": "true", "starting_after": cut},
    )

    rest = sse_events(resumed.text)
    assert [e["sequence_number"] for e in rest] == [
        e["sequence_number"] for e in events[cut + 1 :]
    ]
    assert rest == events[cut + 1 :]
    assert rest[-1]["response"]["output"][0]["content"][0]["text"] == done.output_text


async def test_background_stream_follows_the_run_live(client, gate):
    async def release_once_running() -> None:
        await gate.entered.wait()
        gate.release.set()

    # The in-process transport delivers a body once it is complete, so the
    # run is released from a task rather than from inside the stream.
    releaser = asyncio.create_task(release_once_running())
    async with client.responses.stream(
        model="gated", input="Go", background=True
    ) as stream:
        final = await stream.get_final_response()
    await releaser

    assert final.output_text == "released"
    assert final.background is True


async def test_unknown_foreground_and_foreign_ids_share_one_not_found(client):
    foreground = await client.responses.create(model="foreground", input="x")
    mine = await client.responses.create(model="bg", input="Go", background=True)

    for response_id, headers in (
        ("resp_unknown", {}),
        (foreground.id, {}),
        (mine.id, {"x-tenant": "someone-else"}),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            await client.responses.retrieve(response_id, extra_headers=headers)
        assert caught.value.body["code"] == "response_not_found"
        with pytest.raises(openai.NotFoundError):
            await client.responses.cancel(response_id, extra_headers=headers)


async def test_background_needs_the_feature(client):
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="foreground", input="x", background=True)

    assert caught.value.body["param"] == "background"


def _answer(paused, verdict="approve"):
    (call,) = paused.output
    return [
        {"type": "function_call_output", "call_id": call.call_id, "output": verdict}
    ]


async def test_interrupt_runs_pause_and_resume_in_the_background(client, runs):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    resume = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    resumed = await await_response(client, resume.id, {"completed"})

    assert paused.output[0].name == "lgos_interrupt"
    assert resumed.output_text == "Refund approve."
    assert runs["answer"] == 1


async def test_a_stale_background_resume_is_a_409_at_submit(client, runs):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    resume = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    await await_response(client, resume.id, {"completed"})

    with pytest.raises(openai.ConflictError) as stale:
        await client.responses.create(
            model="refund",
            background=True,
            previous_response_id=paused.id,
            input=_answer(paused),
        )

    assert stale.value.body["code"] == "interrupt_state_conflict"
    assert runs["answer"] == 1


async def test_a_second_background_resume_of_a_queued_one_is_run_busy(
    client, gate, runs
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    first = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )

    with pytest.raises(openai.ConflictError) as second:
        await client.responses.create(
            model="refund",
            background=True,
            previous_response_id=paused.id,
            input=_answer(paused, "deny"),
        )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    done = await await_response(client, first.id, {"completed"})

    assert second.value.body["code"] == "run_busy"
    assert done.output_text == "Refund approve."
    assert runs["answer"] == 1


@pytest.mark.parametrize("stream", [False, True])
async def test_a_foreground_resume_of_a_pause_a_queued_resume_holds_is_run_busy(
    client, gate, runs, stream
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    # The only slot runs a held job, so the resume below waits in the queue.
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    queued = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )

    # The accepted resume holds the pause: another one is refused at once,
    # not run ahead of it (which would fail the accepted one later).
    with pytest.raises(openai.ConflictError) as refused:
        await client.responses.create(
            model="refund",
            previous_response_id=paused.id,
            input=_answer(paused, "deny"),
            stream=stream,
        )
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    done = await await_response(client, queued.id, {"failed", "completed"})

    assert refused.value.body["code"] == "run_busy"
    assert done.status == "completed"
    assert done.output_text == "Refund approve."
    assert runs["answer"] == 1


async def test_a_resume_whose_pause_went_before_its_job_started_ends_with_the_conflict(
    client, gate, runs, saver
):
    submitted = await client.responses.create(
        model="refund", input="Refund", background=True
    )
    paused = await await_response(client, submitted.id, {"completed"})
    await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    # Accepted: the run is still paused and no other Response drives it ...
    late = await client.responses.create(
        model="refund",
        background=True,
        previous_response_id=paused.id,
        input=_answer(paused),
    )
    # ... but the pause goes (the expiry sweep) before the job starts.
    run = run_id_from_response_id(paused.id, "default", "refund")
    await saver.adelete_thread(checkpoint_key("default", "refund", run))
    gate.release.set()
    lost = await await_response(client, late.id, {"failed", "completed"})
    stream = await client.responses.retrieve(late.id, stream=True)
    events = [event async for event in stream]

    assert lost.status == "failed"
    assert lost.error.code == "interrupt_state_conflict"
    assert lost.error.message.startswith("The run has no pending interrupts")
    # A follower of the stream sees the same end.
    assert [event.type for event in events][-2:] == ["error", "response.failed"]
    assert events[0].type == "response.created"
    assert events[-1].response.error == lost.error
    assert runs["answer"] == 0


async def test_another_tenants_run_id_is_free_and_ones_own_is_busy(client, gate):
    """Whether a run id is in use tells nothing about another tenant's runs:
    bob may use the id of alice's queued run (it is another run), alice may
    not use it twice."""
    alice, bob = (
        client.with_options(default_headers={"x-tenant": tenant})
        for tenant in ("alice", "bob")
    )
    blocker = await client.responses.create(model="gated", input="x", background=True)
    await gate.entered.wait()
    named = {
        "model": "refund",
        "input": "Refund",
        "background": True,
        "metadata": {"lgos_run_id": str(uuid.uuid4())},
    }

    alices = await alice.responses.create(**named)
    bobs = await bob.responses.create(**named)
    with pytest.raises(openai.ConflictError) as again:
        await alice.responses.create(**named)
    gate.release.set()
    await await_response(client, blocker.id, {"completed"})
    ends = [
        await await_response(tenant, created.id, {"completed", "failed"})
        for tenant, created in ((alice, alices), (bob, bobs))
    ]

    assert again.value.body["code"] == "run_busy"
    assert bobs.status == "queued"
    # Each paused a run of its own.
    assert [end.output[0].name for end in ends] == ["lgos_interrupt"] * 2


async def test_idempotency_keys_are_scoped_and_expire():
    now = [0.0]
    store = InMemoryResponseStore(idempotency_ttl=60, clock=lambda: now[0])

    def job(response_id, scope="a"):
        return BackgroundJob(response_id=response_id, scope=scope, body={})

    _, first = await store.create(
        job("r1"), {"id": "r1"}, idempotency_key="k", body_digest="d"
    )
    _, same = await store.create(
        job("r2"), {"id": "r2"}, idempotency_key="k", body_digest="d"
    )
    _, other_scope = await store.create(
        job("r3", scope="b"), {"id": "r3"}, idempotency_key="k", body_digest="x"
    )
    now[0] = 60.0
    _, after_expiry = await store.create(
        job("r4"), {"id": "r4"}, idempotency_key="k", body_digest="new"
    )

    assert (first, same, other_scope, after_expiry) == (True, False, True, True)


async def test_idempotency_key_length_is_checked(client):
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="bg",
            input="Go",
            background=True,
            extra_headers={"Idempotency-Key": "k" * 256},
        )

    assert caught.value.body["param"] == "Idempotency-Key"


def test_documented_postgres_integration_paths_still_import_with_a_warning() -> None:
    from langgraph_openai_serve.backends.postgres.queue import ProcrastinateQueue
    from langgraph_openai_serve.backends.postgres.responses import (
        PostgresResponseStore,
    )

    with pytest.deprecated_call(match="backends.postgres.responses"):
        from langgraph_openai_serve.integrations.postgres_store import (
            PostgresResponseStore as OldStore,
        )
    with pytest.deprecated_call(match="backends.postgres.queue.ProcrastinateQueue"):
        from langgraph_openai_serve.integrations.procrastinate import (
            ProcrastinateBackend as OldBackend,
        )
    assert OldStore is PostgresResponseStore
    assert OldBackend is ProcrastinateQueue


def test_the_deprecated_store_and_queue_arguments_still_build_a_memory_backend() -> (
    None
):
    store = InMemoryResponseStore()
    with pytest.deprecated_call(match="backend=MemoryBackend"):
        server = LanggraphOpenaiServe(
            graphs=GraphRegistry(
                registry={
                    "bg": GraphConfig(
                        graph=one_node_graph(lambda _: {}), description="bg"
                    )
                }
            ),
            settings=Settings(RESPONSE_STORE="memory"),
            response_store=store,
        )
    assert server.services.state.responses is store


async def test_a_follower_arriving_at_a_stopped_process_gets_a_clean_end(gate):
    server = LanggraphOpenaiServe(
        graphs=GraphRegistry(
            registry={
                "gated": GraphConfig(
                    graph=one_node_graph(gate.node),
                    description="gated",
                    features={GraphFeature.BACKGROUND},
                )
            }
        ),
        settings=Settings(),
        backend=MemoryBackend(concurrency=1),
    ).bind_openai_api()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server.app), base_url="http://t"
    ) as http:
        client = openai.AsyncOpenAI(
            base_url="http://t/v1", api_key="x", http_client=http, max_retries=0
        )
        submitted = await client.responses.create(
            model="gated", input="Go", background=True
        )
        await asyncio.wait_for(gate.entered.wait(), 30)

        # The process stopped accepting (lgos serve's drain ended) while this
        # follower was on its way: its stream ends at once, cleanly, and the
        # client re-attaches elsewhere from where it was.
        server.lifecycle.stop()
        events = await asyncio.wait_for(_follow(client, submitted.id), 30)
        gate.release.set()
        done = await await_response(client, submitted.id, {"completed"})

    assert events == []
    assert done.output_text == "released"


async def _follow(client, response_id):
    stream = await client.responses.retrieve(response_id, stream=True)
    return [event async for event in stream]
