"""One conformance suite for every ``ResponseStore``: memory and PostgreSQL.

Each test runs against both backends (the ``backend`` fixture of
``backend_fixtures.py`` is parametrized),
so they keep Responses, their items and their chains the same way, isolate
scopes the same way, and delete what they promise.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.operations.admission import LimitReached
from langgraph_openai_serve.responses.protocol import BackgroundJob
from psycopg.rows import dict_row

pytestmark = pytest.mark.anyio

# The table as the first background release created it, before foreground
# Responses were kept: the migration must keep its rows.
_OLD_SCHEMA = """
CREATE TABLE lgos_background_responses (
    id text PRIMARY KEY,
    scope text NOT NULL,
    job jsonb NOT NULL,
    snapshot jsonb NOT NULL,
    cancel_requested boolean NOT NULL DEFAULT false,
    idempotency_key text,
    body_digest text,
    created_at timestamptz NOT NULL DEFAULT now()
)
"""


@pytest.fixture
def store(backend):
    return backend.responses


def _response(
    previous: str | None = None, status: str = "completed", text: str = "hi"
) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "status": status,
        "background": False,
        "previous_response_id": previous,
        "store": True,
        "output": [
            {
                "id": f"msg_{uuid.uuid4().hex}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
    }


def _items(text: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"msg_{uuid.uuid4().hex}",
            "type": "message",
            "role": "user",
            "status": "completed",
            "content": [{"type": "input_text", "text": text}],
        }
    ]


async def test_a_kept_response_and_its_items_come_back_as_saved(store):
    response, items = _response(), _items("question")

    await store.save("alice", response, items)

    assert await store.get(response["id"], "alice") == response
    assert await store.input_items(response["id"], "alice") == items


async def test_another_scope_finds_nothing_and_deletes_nothing(store):
    response = _response()
    await store.save("alice", response, _items("secret"))

    assert await store.get(response["id"], "bob") is None
    assert await store.input_items(response["id"], "bob") is None
    assert await store.chain(response["id"], "bob") is None
    assert await store.delete(response["id"], "bob") is False
    assert await store.get(response["id"], "alice") == response


async def test_output_items_are_found_by_id_in_their_scope_only(store):
    first, second = _response(text="one"), _response(text="two")
    await store.save("alice", first, _items("q1"))
    await store.save("alice", second, _items("q2"))
    one, two = first["output"][0], second["output"][0]
    question = (await store.input_items(first["id"], "alice"))[0]

    found = await store.output_items([two["id"], one["id"], "msg_x"], "alice")
    await store.delete(first["id"], "alice")

    assert found == {one["id"]: one, two["id"]: two}
    assert await store.output_items([one["id"], question["id"]], "alice") == {}
    assert await store.output_items([two["id"]], "bob") == {}
    assert await store.output_items([], "alice") == {}


async def test_a_chain_is_walked_oldest_first_and_ends_at_a_deleted_ancestor(store):
    first = _response(text="one")
    second = _response(first["id"], text="two")
    third = _response(second["id"], text="three")
    for number, response in enumerate((first, second, third)):
        await store.save("alice", response, _items(f"q{number}"))

    whole = await store.chain(third["id"], "alice")
    await store.delete(first["id"], "alice")
    cut = await store.chain(third["id"], "alice")

    assert [turn.response["id"] for turn in whole] == [
        first["id"],
        second["id"],
        third["id"],
    ]
    assert [turn.input_items[0]["content"][0]["text"] for turn in whole] == [
        "q0",
        "q1",
        "q2",
    ]
    assert [turn.response["id"] for turn in cut] == [second["id"], third["id"]]
    assert await store.chain("resp_unknown", "alice") is None


async def test_deleting_a_background_response_removes_its_events(
    store, on_postgres, postgres_uri
):
    job = BackgroundJob(response_id=f"resp_{uuid.uuid4().hex}", scope="alice", body={})
    snapshot = {"id": job.response_id, "status": "queued", "background": True}
    await store.create(job, snapshot, input_items=_items("run"))
    await store.append_events(job.response_id, [{"type": "response.created"}])
    await store.set_snapshot(job.response_id, {**snapshot, "status": "completed"})

    assert (await store.input_items(job.response_id, "alice"))[0]["type"] == "message"
    assert await store.delete(job.response_id, "alice") is True
    assert await store.get(job.response_id, "alice") is None
    assert await store.job(job.response_id) is None
    if on_postgres:
        assert await _rows(postgres_uri, job.response_id) == (0, 0)


async def test_an_attempt_counts_only_for_a_live_response_nobody_cancelled(store):
    live, cancelled, ended = (
        BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {}) for _ in range(3)
    )
    for job in (live, cancelled, ended):
        queued = {"id": job.response_id, "status": "queued", "background": True}
        await store.create(job, queued)
    await store.request_cancel(cancelled.response_id)
    await store.set_snapshot(ended.response_id, {"status": "completed"})

    first = await store.start_attempt(live.response_id)
    second = await store.start_attempt(live.response_id)
    refused = [await store.start_attempt(cancelled.response_id) for _ in range(2)]
    after_end = await store.start_attempt(ended.response_id)
    unknown = await store.start_attempt("resp_unknown")

    assert first.snapshot["status"] == "queued"
    assert first.job == live  # the worker reads what to run with the count
    assert (first.cancel_requested, first.lost, first.last_sequence) == (False, 0, -1)
    assert first.waited is not None
    assert (second.lost, second.waited) == (1, None)  # the first run was lost
    assert [(a.cancel_requested, a.lost, a.waited) for a in refused] == [
        (True, 0, None),
        (True, 0, None),
    ]
    assert (after_end.snapshot["status"], after_end.lost) == ("completed", 0)
    assert (unknown.snapshot, unknown.job) == (None, None)


async def test_a_scope_at_its_unfinished_limit_is_refused_until_one_ends(store):
    def queued_job(scope: str) -> tuple[BackgroundJob, dict[str, Any]]:
        job = BackgroundJob(f"resp_{uuid.uuid4().hex}", scope, {})
        return job, {"id": job.response_id, "status": "queued", "background": True}

    first, second = queued_job("alice"), queued_job("alice")
    await store.create(*first, idempotency_key="k1", body_digest="d", most_unfinished=2)
    await store.create(*second, most_unfinished=2)
    await store.set_snapshot(second[0].response_id, {"status": "in_progress"})

    third = queued_job("alice")
    with pytest.raises(LimitReached) as refused:
        await store.create(*third, most_unfinished=2)
    # The retry of a known key is its original, not a new Response.
    retried, created = await store.create(
        *queued_job("alice"), idempotency_key="k1", body_digest="d", most_unfinished=2
    )
    bobs = await store.create(*queued_job("bob"), most_unfinished=2)
    await store.set_snapshot(first[0].response_id, {"status": "completed"})
    after_one_ended = await store.create(*third, most_unfinished=2)

    assert (refused.value.limit, refused.value.allowed) == ("tenant_background", 2)
    assert await store.get(third[0].response_id, "alice") is not None
    assert (retried["id"], created) == (first[0].response_id, False)
    assert bobs[1] is True
    assert after_one_ended[1] is True


async def test_events_given_with_a_snapshot_are_kept_only_if_it_replaced_it(store):
    job = BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {})
    await store.create(job, {"id": job.response_id, "status": "queued"})
    started = [
        {"type": "response.created", "sequence_number": 0, "response": {"a": 1}},
        {"type": "response.in_progress", "sequence_number": 1, "response": {}},
    ]
    end = [{"type": "response.completed", "sequence_number": 2, "response": {}}]
    late = [{"type": "response.output_text.delta", "sequence_number": 3}]

    running = await store.set_snapshot(
        job.response_id, {"status": "in_progress"}, events=started
    )
    ended = await store.set_snapshot(
        job.response_id, {"status": "completed"}, events=end
    )
    replaced = await store.set_snapshot(
        job.response_id, {"status": "in_progress"}, events=late
    )
    stored = [event async for event in store.events(job.response_id, -1)]

    assert (running, ended, replaced) == (True, True, False)
    assert [event.sequence for event in stored] == [0, 1, 2]
    assert [event.event for event in stored] == [*started, *end]
    # Kept as given, down to the order of their keys.
    assert [list(event.event) for event in stored] == [
        list(event) for event in (*started, *end)
    ]


async def test_expiry_deletes_finished_responses_only(
    store, on_postgres, postgres_uri, wall_clock
):
    old, running = _response(), BackgroundJob(f"resp_{uuid.uuid4().hex}", "alice", {})
    await store.save("alice", old, _items("old"))
    await store.create(running, {"id": running.response_id, "status": "in_progress"})
    # Everything above is older than a moment from now (both clocks).
    before = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    newer = _response()
    wall_clock.now = before.timestamp() + 1  # memory stores read it
    await store.save("alice", newer, _items("new"))
    if on_postgres:
        await _age(postgres_uri, old["id"], running.response_id)
        before = dt.datetime.now(dt.UTC) - dt.timedelta(days=1)

    deleted = await store.delete_expired(before)

    assert deleted == 1
    assert await store.get(old["id"], "alice") is None
    assert await store.get(running.response_id, "alice") is not None
    assert await store.get(newer["id"], "alice") == newer
    if on_postgres:
        assert await _rows(postgres_uri, old["id"]) == (0, 0)


async def _age(uri: str, *response_ids: str) -> None:
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute(
            "UPDATE lgos_background_responses "
            "SET created_at = now() - interval '31 days' WHERE id = ANY(%s)",
            (list(response_ids),),
        )


async def _rows(uri: str, response_id: str) -> tuple[int, int]:
    async with await psycopg.AsyncConnection.connect(
        uri, autocommit=True, row_factory=dict_row
    ) as conn:
        responses = await conn.execute(
            "SELECT count(*) AS n FROM lgos_background_responses WHERE id = %s",
            (response_id,),
        )
        events = await conn.execute(
            "SELECT count(*) AS n FROM lgos_background_events WHERE response_id = %s",
            (response_id,),
        )
        return (await responses.fetchone())["n"], (await events.fetchone())["n"]


async def test_setup_migrates_an_existing_background_table_in_place(
    empty_database,
):
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(_OLD_SCHEMA)
        conn.execute(
            "INSERT INTO lgos_background_responses (id, scope, job, snapshot) "
            "VALUES ('resp_old', 'alice', "
            '\'{"response_id": "resp_old", "scope": "alice", "body": {}}\', '
            '\'{"id": "resp_old", "status": "completed"}\')'
        )
    backend = PostgresBackend(empty_database)
    migrated = backend.responses
    try:
        await backend.setup()
        await backend.setup()  # idempotent
        kept = _response()
        await migrated.save("alice", kept, _items("after the migration"))

        assert await migrated.get("resp_old", "alice") == {
            "id": "resp_old",
            "status": "completed",
        }
        assert await migrated.input_items("resp_old", "alice") == []
        assert await migrated.job("resp_old") is not None
        assert await migrated.get(kept["id"], "alice") == kept
    finally:
        await backend.close()
