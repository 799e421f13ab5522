"""The Batch API through the official SDK, on a real Files API (SeaweedFS):
the Batch object and its lifecycle, the output and error files, validation,
cancel, expiry and tenancy. Batches run in the API process here (memory
backend); ``test_batches_postgres.py`` runs them on workers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest
from batch_fixtures import Tenant, TenantsFactory
from langchain_core.messages import AIMessage
from langgraph.graph import MessagesState
from langgraph_openai_serve.batches.input import Limits
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_testkit import async_wait_until, await_batch
from openai.types import Batch
from support import config, one_node_graph, single_model_graph

pytestmark = pytest.mark.anyio


def _echo(messages: Any) -> str:
    return f"echo: {messages[-1].text}"


def _graphs(gate: asyncio.Event | None = None) -> dict[str, Any]:
    async def gated(state: MessagesState) -> dict[str, Any]:
        if "wait" in state["messages"][-1].text:
            assert gate is not None
            await gate.wait()
        return {"messages": [AIMessage(content="passed")]}

    return {
        "echo": config(single_model_graph(ScriptedChatModel(responder=_echo))),
        "gate": config(one_node_graph(gated)),
    }


def _responses_line(custom_id: str, text: str, model: str = "echo") -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/responses",
        "body": {"model": model, "input": text},
    }


def _chat_line(custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": body,
    }


async def _create(tenant: Tenant, file_id: str, **options: Any) -> Batch:
    return await tenant.lgos.batches.create(
        input_file_id=file_id,
        endpoint=options.pop("endpoint", "/v1/responses"),
        completion_window="24h",
        **options,
    )


async def test_a_responses_batch_runs_every_line_into_the_output_file(
    tenants: TenantsFactory,
) -> None:
    alice = tenants(_graphs(), BATCH_LINES_PER_JOB=2)["alice"]
    lines = [_responses_line(f"q{i}", f"question {i}") for i in range(5)]
    created = await _create(
        alice,
        await alice.upload(lines),
        metadata={"run": "nightly"},
        output_expires_after={"anchor": "created_at", "seconds": 3600},
    )

    assert created.status == "validating"
    assert created.object == "batch"
    assert created.completion_window == "24h"
    assert created.metadata == {"run": "nightly"}
    assert created.expires_at == created.created_at + 24 * 3600
    done = await await_batch(alice.lgos, created.id)

    assert done.status == "completed", done.errors
    assert done.request_counts is not None
    assert done.request_counts.model_dump() == {"total": 5, "completed": 5, "failed": 0}
    assert done.model == "echo"
    assert done.error_file_id is None
    for moment in ("in_progress_at", "finalizing_at", "completed_at"):
        assert getattr(done, moment) is not None, moment
    assert done.failed_at is None
    assert done.cancelled_at is None
    assert done.usage is not None
    assert done.usage.total_tokens > 0
    output = await alice.lines_of(done.output_file_id)
    assert [line["custom_id"] for line in output] == [f"q{i}" for i in range(5)]
    first = output[0]
    assert first["error"] is None
    assert first["id"].startswith("batch_req_")
    assert first["response"]["status_code"] == 200
    assert first["response"]["request_id"]
    assert first["response"]["body"]["object"] == "response"
    assert first["response"]["body"]["output"][0]["content"][0]["text"] == (
        "echo: question 0"
    )
    stored = await alice.files.files.retrieve(done.output_file_id or "")
    assert stored.purpose == "batch_output"
    assert stored.expires_at == stored.created_at + 3600


async def test_a_chat_batch_puts_failed_requests_in_the_error_file(
    tenants: TenantsFactory,
) -> None:
    alice = tenants(_graphs())["alice"]
    lines = [
        _chat_line(
            "ok", {"model": "echo", "messages": [{"role": "user", "content": "hi"}]}
        ),
        _chat_line("bad", {"model": "echo", "messages": "not a list"}),
    ]
    created = await _create(
        alice, await alice.upload(lines), endpoint="/v1/chat/completions"
    )
    done = await await_batch(alice.lgos, created.id)

    assert done.status == "completed"
    assert done.request_counts is not None
    assert (done.request_counts.completed, done.request_counts.failed) == (1, 1)
    [ok] = await alice.lines_of(done.output_file_id)
    assert ok["response"]["body"]["object"] == "chat.completion"
    assert ok["response"]["body"]["choices"][0]["message"]["content"] == "echo: hi"
    [bad] = await alice.lines_of(done.error_file_id)
    assert bad["custom_id"] == "bad"
    assert bad["response"]["status_code"] == 400
    assert bad["response"]["body"]["error"]["param"] == "messages"


async def test_an_invalid_input_file_fails_the_batch_naming_each_line(
    tenants: TenantsFactory,
) -> None:
    alice = tenants(_graphs())["alice"]
    lines: list[Any] = [
        _responses_line("a", "fine"),
        _responses_line("a", "again"),
        {**_responses_line("b", "x"), "url": "/v1/chat/completions"},
        {**_responses_line("c", "x"), "method": "GET"},
        _responses_line("d", "x", model="nobody"),
        {
            **_responses_line("e", "x"),
            "body": {"model": "echo", "input": "x", "stream": True},
        },
        "{not json",
    ]
    created = await _create(alice, await alice.upload(lines))
    done = await await_batch(alice.lgos, created.id)

    assert done.status == "failed"
    assert done.failed_at is not None
    assert done.output_file_id is None
    assert done.error_file_id is None
    assert done.errors is not None
    assert done.errors.data is not None
    found = [(e.code, e.line, e.param) for e in done.errors.data]
    assert found == [
        ("duplicate_custom_id", 2, "custom_id"),
        ("mismatched_endpoint", 3, "url"),
        ("invalid_request", 4, "method"),
        ("model_not_found", 5, "body.model"),
        ("invalid_request", 6, "body.stream"),
        ("invalid_json_line", 7, None),
    ]
    assert all(e.message for e in done.errors.data)


async def test_a_line_too_long_or_too_deep_fails_the_batch_at_once_naming_it(
    tenants: TenantsFactory,
) -> None:
    # Once, a line nested past Python's recursion limit broke validation: it
    # was retried six times and the batch failed with a server_error.
    alice = tenants(_graphs())["alice"]
    long = _responses_line("b", "x" * 1024 * 1024)  # over the 1 MiB default
    lines: list[Any] = [
        _responses_line("a", "fine"),
        long,
        "[" * 50_000 + "]" * 50_000,
        _responses_line("c", "fine"),
    ]
    created = await _create(alice, await alice.upload(lines))
    done = await await_batch(alice.lgos, created.id, within=30)

    assert done.status == "failed"
    assert done.errors is not None
    assert done.errors.data is not None
    assert [(e.code, e.line) for e in done.errors.data] == [
        ("line_too_large", 2),
        ("json_too_deep", 3),
    ]


async def test_an_input_of_another_purpose_or_tenant_is_refused_at_create(
    tenants: TenantsFactory,
) -> None:
    both = tenants(_graphs())
    alice, bob = both["alice"], both["bob"]
    notes = await alice.upload([_responses_line("a", "x")], purpose="user_data")
    bobs = await bob.upload([_responses_line("a", "x")])
    unknown = "file-" + "0" * 24

    refusals = {}
    for name, file_id in (("notes", notes), ("bobs", bobs), ("unknown", unknown)):
        with pytest.raises(openai.BadRequestError) as refused:
            await _create(alice, file_id)
        body = refused.value.body
        assert isinstance(body, dict)
        refusals[name] = (body["code"], body["param"], body["message"])

    assert refusals["notes"][:2] == ("invalid_file_purpose", "input_file_id")
    # Another tenant's file is as unknown as one that never was.
    assert refusals["bobs"] == (
        "file_not_found",
        "input_file_id",
        refusals["unknown"][2].replace(unknown, bobs),
    )
    assert refusals["unknown"][:2] == ("file_not_found", "input_file_id")
    assert [b.id async for b in alice.lgos.batches.list()] == []


async def test_an_input_over_the_byte_limit_is_refused_and_one_at_it_runs(
    tenants: TenantsFactory,
) -> None:
    alice = tenants(_graphs())["alice"]
    lines = [_responses_line(f"q{i}", f"question {i}") for i in range(3)]
    size = len("".join(json.dumps(line) + "\n" for line in lines).encode())
    at_limit = tenants(_graphs(), limits=Limits(bytes=size))["alice"]
    over_limit = tenants(_graphs(), limits=Limits(bytes=size - 1))["alice"]
    file_id = await alice.upload(lines)

    with pytest.raises(openai.BadRequestError) as refused:
        await _create(over_limit, file_id)
    ran = await await_batch(at_limit.lgos, (await _create(at_limit, file_id)).id)

    body = refused.value.body
    assert isinstance(body, dict)
    assert (body["code"], body["param"]) == ("file_too_large", "input_file_id")
    assert f"{size} bytes" in body["message"]
    assert ran.status == "completed", ran.errors
    assert ran.request_counts is not None
    assert ran.request_counts.completed == 3


async def test_an_input_deleted_after_create_fails_the_batch_naming_it(
    tenants: TenantsFactory,
) -> None:
    """The file is read again when the batch is validated: one gone since
    create fails the batch, as ``file_not_found``."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def hold(state: MessagesState) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"messages": [AIMessage(content="held")]}

    graphs = {**_graphs(), "hold": config(one_node_graph(hold))}
    # One job at a time: while the held line runs, the next validation waits.
    alice = tenants(graphs, BACKGROUND_CONCURRENCY=1)["alice"]
    busy = await _create(
        alice, await alice.upload([_responses_line("held", "x", model="hold")])
    )
    await entered.wait()
    file_id = await alice.upload([_responses_line("a", "x")])
    created = await _create(alice, file_id)
    await alice.files.files.delete(file_id)
    release.set()
    failed = await await_batch(alice.lgos, created.id)
    await await_batch(alice.lgos, busy.id)

    assert failed.status == "failed"
    assert [(e.code, e.param) for e in failed.errors.data] == [  # type: ignore[union-attr]
        ("file_not_found", "input_file_id")
    ]


async def test_cancel_keeps_finished_lines_and_settles_the_rest_as_cancelled(
    tenants: TenantsFactory,
) -> None:
    gate = asyncio.Event()
    alice = tenants(_graphs(gate), BATCH_LINES_PER_JOB=1, BATCH_CONCURRENCY=1)["alice"]
    lines = [
        _responses_line("first", "go", model="gate"),
        _responses_line("second", "wait", model="gate"),
        _responses_line("third", "go", model="gate"),
    ]
    created = await _create(alice, await alice.upload(lines))
    running = await await_batch(alice.lgos, created.id, {"in_progress"})

    async def first_done() -> bool:
        batch = await alice.lgos.batches.retrieve(created.id)
        return batch.request_counts is not None and batch.request_counts.completed == 1

    await async_wait_until(first_done, 60, "the first line")
    assert running.request_counts is not None
    assert running.request_counts.total == 3
    cancelling = await alice.lgos.batches.cancel(created.id)

    assert cancelling.status in {"cancelling", "cancelled"}
    assert cancelling.cancelling_at is not None
    done = await await_batch(alice.lgos, created.id)
    assert done.status == "cancelled"
    assert done.cancelled_at is not None
    output = await alice.lines_of(done.output_file_id)
    errors = await alice.lines_of(done.error_file_id)
    assert [line["custom_id"] for line in output] == ["first"]
    assert [line["custom_id"] for line in errors] == ["second", "third"]
    assert {line["error"]["code"] for line in errors} == {"batch_cancelled"}
    assert all(line["response"] is None for line in errors)
    again = await alice.lgos.batches.cancel(created.id)
    assert again.status == "cancelled"


async def test_a_batch_that_ended_cannot_be_cancelled(tenants: TenantsFactory) -> None:
    alice = tenants(_graphs())["alice"]
    failing = await alice.upload(["{not json"])
    failed = await await_batch(alice.lgos, (await _create(alice, failing)).id)

    with pytest.raises(openai.ConflictError) as raised:
        await alice.lgos.batches.cancel(failed.id)

    assert raised.value.code == "batch_not_cancellable"


async def test_a_batch_past_its_window_expires_with_the_rest_unrun(
    tenants: TenantsFactory,
) -> None:
    gate = asyncio.Event()
    alice = tenants(
        _graphs(gate),
        BATCH_LINES_PER_JOB=1,
        BATCH_CONCURRENCY=1,
        BATCH_COMPLETION_WINDOW=1,
    )["alice"]
    lines = [
        _responses_line("quick", "go", model="gate"),
        _responses_line("stuck", "wait", model="gate"),
    ]
    created = await _create(alice, await alice.upload(lines))
    done = await await_batch(alice.lgos, created.id)

    assert done.status == "expired"
    assert done.expired_at is not None
    output = await alice.lines_of(done.output_file_id)
    errors = await alice.lines_of(done.error_file_id)
    # "quick" ran if it started inside the second (on a busy machine it may
    # not have); "stuck" never ends, so the expiry settles it. Each is in
    # exactly one file.
    assert sorted(line["custom_id"] for line in output + errors) == ["quick", "stuck"]
    assert "stuck" in [line["custom_id"] for line in errors]
    assert {line["error"]["code"] for line in errors} == {"batch_expired"}
    assert all(line["response"] is None for line in errors)


async def test_another_tenant_finds_no_batch_and_no_result(
    tenants: TenantsFactory,
) -> None:
    both = tenants(_graphs())
    alice, bob = both["alice"], both["bob"]
    created = await _create(alice, await alice.upload([_responses_line("a", "x")]))
    done = await await_batch(alice.lgos, created.id)

    with pytest.raises(openai.NotFoundError):
        await bob.lgos.batches.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        await bob.lgos.batches.cancel(created.id)
    assert [b.id async for b in bob.lgos.batches.list()] == []
    with pytest.raises(openai.NotFoundError):
        await bob.files.files.content(done.output_file_id or "")
    assert [b.id async for b in alice.lgos.batches.list()] == [created.id]


async def test_batches_list_newest_first_in_pages(tenants: TenantsFactory) -> None:
    alice = tenants(_graphs())["alice"]
    file_id = await alice.upload([_responses_line("a", "x")])
    ids = [(await _create(alice, file_id)).id for _ in range(3)]

    first = await alice.lgos.batches.list(limit=2)
    assert [b.id for b in first.data] == ids[::-1][:2]
    assert first.has_more
    rest = await alice.lgos.batches.list(limit=2, after=first.data[-1].id)
    assert [b.id for b in rest.data] == ids[:1]
    assert not rest.has_more
    assert [b.id async for b in alice.lgos.batches.list(limit=1)] == ids[::-1]


async def test_a_server_without_a_files_api_refuses_batches(make_client) -> None:
    client = make_client({"echo": config(single_model_graph(ScriptedChatModel()))})

    with pytest.raises(openai.BadRequestError) as raised:
        await client.batches.create(
            input_file_id="file-x", endpoint="/v1/responses", completion_window="24h"
        )

    assert raised.value.body["param"] == "input_file_id"  # type: ignore[index]


async def test_an_unreachable_files_api_fails_the_batch_instead_of_hanging(
    tenants: TenantsFactory, unused_port: int
) -> None:
    alice = tenants(_graphs(), BATCH_FILES_URL=f"http://127.0.0.1:{unused_port}/v1")[
        "alice"
    ]
    created = await _create(alice, "file-anything")
    done = await await_batch(alice.lgos, created.id)

    assert done.status == "failed"
    assert done.errors is not None
    assert [e.code for e in done.errors.data or []] == ["server_error"]


async def test_a_tenant_past_its_open_batches_gets_429_and_another_creates_one(
    tenants: TenantsFactory,
) -> None:
    gate = asyncio.Event()
    both = tenants(_graphs(gate), TENANT_MAX_BATCHES=2)
    alice, bob = both["alice"], both["bob"]
    waiting = await alice.upload([_responses_line("stuck", "wait", model="gate")])
    first = await _create(alice, waiting)
    second = await _create(alice, waiting)

    with pytest.raises(openai.RateLimitError) as refused:
        await _create(alice, waiting)
    bobs = await _create(bob, await bob.upload([_responses_line("q", "hi")]))
    listed = [batch.id async for batch in alice.lgos.batches.list()]
    gate.set()
    for batch in (first, second):
        await await_batch(alice.lgos, batch.id)
    third = await _create(alice, waiting)  # one ended: room again
    await await_batch(alice.lgos, third.id)

    error = refused.value.body
    assert refused.value.status_code == 429
    assert isinstance(error, dict)
    assert error["code"] == "rate_limit_exceeded"
    assert "2 batches in progress" in error["message"]
    assert refused.value.response.headers["retry-after"] == "1"
    assert bobs.status in {"validating", "in_progress", "finalizing", "completed"}
    # Nothing was kept of the refused one.
    assert sorted(listed) == sorted([first.id, second.id])
