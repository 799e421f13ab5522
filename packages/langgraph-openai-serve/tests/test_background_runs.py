"""Background Responses with the in-process backend, through the SDK (the
``background_client`` and ``background_gate`` fixtures of
``background_fixtures.py``): a submit is queued and polled to the
foreground's output, a run is cancelled while running or queued, a raising
run ends failed, idempotency keys return the original (scoped, expiring,
length-checked), unknown and foreign ids are one not-found, background needs
its feature, and the deprecated integration paths and arguments still work."""

from __future__ import annotations

import asyncio

import openai
import pytest
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.backends.memory.responses import InMemoryResponseStore
from langgraph_openai_serve.responses.protocol import BackgroundJob
from lgos_testkit import await_response
from support import one_node_graph

pytestmark = pytest.mark.anyio


async def test_submit_returns_queued_then_polling_reaches_the_foreground_output(
    background_client,
):
    foreground = await background_client.responses.create(model="bg", input="Go")
    queued = await background_client.responses.create(
        model="bg", input="Go", background=True
    )

    done = await await_response(background_client, queued.id, {"completed"})

    assert queued.status == "queued"
    assert queued.background is True
    assert done.output_text == foreground.output_text == "Long work is done."
    assert done.usage.output_tokens == foreground.usage.output_tokens


async def test_cancel_while_running_cancels_the_graph_task(
    background_client, background_gate
):
    submitted = await background_client.responses.create(
        model="gated", input="Go", background=True
    )
    await asyncio.wait_for(background_gate.entered.wait(), 30)

    cancelled = await background_client.responses.cancel(submitted.id)
    again = await background_client.responses.cancel(submitted.id)

    assert cancelled.status == "cancelled"
    assert again.status == "cancelled"
    assert background_gate.cancelled.is_set()


async def test_cancel_while_queued_never_starts_the_run(
    background_client, background_gate
):
    blocker = await background_client.responses.create(
        model="gated", input="Go", background=True
    )
    await asyncio.wait_for(background_gate.entered.wait(), 30)
    queued = await background_client.responses.create(
        model="bg", input="Go", background=True
    )

    cancelled = await background_client.responses.cancel(queued.id)
    background_gate.release.set()
    await await_response(background_client, blocker.id, {"completed"})
    # One run at a time, in order: once a later run is done, the cancelled
    # one would have run before it.
    later = await background_client.responses.create(
        model="bg", input="Go", background=True
    )
    await await_response(background_client, later.id, {"completed"})

    assert cancelled.status == "cancelled"
    assert (await background_client.responses.retrieve(queued.id)).status == "cancelled"


async def test_a_raising_run_ends_failed_with_the_error_envelope(background_client):
    submitted = await background_client.responses.create(
        model="failing", input="Go", background=True
    )

    failed = await await_response(background_client, submitted.id, {"failed"})

    assert failed.error.code == "server_error"
    assert failed.error.message == "Internal server error"


async def test_idempotency_key_returns_the_original_and_rejects_another_body(
    background_client, refund_steps
):
    headers = {"Idempotency-Key": "order-42"}
    first = await background_client.responses.create(
        model="bg", input="Go", background=True, extra_headers=headers
    )
    retry = await background_client.responses.create(
        model="bg", input="Go", background=True, extra_headers=headers
    )
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        await background_client.responses.create(
            model="bg", input="Something else", background=True, extra_headers=headers
        )

    assert retry.id == first.id
    assert reused.value.body["code"] == "idempotency_key_reused"


async def test_unknown_foreground_and_foreign_ids_share_one_not_found(
    background_client,
):
    foreground = await background_client.responses.create(model="foreground", input="x")
    mine = await background_client.responses.create(
        model="bg", input="Go", background=True
    )

    for response_id, headers in (
        ("resp_unknown", {}),
        (foreground.id, {}),
        (mine.id, {"x-tenant": "someone-else"}),
    ):
        with pytest.raises(openai.NotFoundError) as caught:
            await background_client.responses.retrieve(
                response_id, extra_headers=headers
            )
        assert caught.value.body["code"] == "response_not_found"
        with pytest.raises(openai.NotFoundError):
            await background_client.responses.cancel(response_id, extra_headers=headers)


async def test_background_needs_the_feature(background_client):
    with pytest.raises(openai.BadRequestError) as caught:
        await background_client.responses.create(
            model="foreground", input="x", background=True
        )

    assert caught.value.body["param"] == "background"


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


async def test_idempotency_key_length_is_checked(background_client):
    with pytest.raises(openai.BadRequestError) as caught:
        await background_client.responses.create(
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
