"""Every statement of the operations that must stay flat as data grows
reads its tables through an index (issue 48).

The operations run through the PostgreSQL backend's own stores and queue
on a small database whose connections have sequential scans disabled
(``enable_seqscan = off``: the planner then takes any index that serves
the statement, the plan a big table gets) and ``auto_explain`` loaded, which
sends the plan of every statement executed, those of functions and triggers
included, back as a notice. A sequential scan of a table that grows with the
deployment's data means no index serves the statement: the test names the
operation, the statement and the table.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.backends.postgres.database import POOL_KWARGS
from langgraph_openai_serve.backends.postgres.fair_fetch import QUEUE
from langgraph_openai_serve.conversations.protocol import Conversation
from langgraph_openai_serve.jobs.protocol import Job, Priority, Task
from langgraph_openai_serve.responses.protocol import BackgroundJob
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

pytestmark = pytest.mark.anyio

GROWING = frozenset(
    {
        "lgos_background_responses",
        "lgos_background_events",
        "lgos_conversations",
        "lgos_conversation_items",
        "lgos_batches",
        "lgos_batch_lines",
        "procrastinate_jobs",
        "procrastinate_events",
    }
)
"""The tables that grow with a deployment's data and traffic (not
``procrastinate_workers``: one row per running worker)."""

_PLANS = (
    "-c session_preload_libraries=auto_explain -c enable_seqscan=off "
    "-c auto_explain.log_min_duration=0 -c auto_explain.log_level=notice "
    "-c auto_explain.log_nested_statements=on -c auto_explain.log_format=json"
)
TENANT = "tenant-a"
OTHER = "tenant-b"
TASK = "lgos.plans_task"


@dataclass
class Plans:
    """The plans the backend's connections report, statement by statement."""

    seen: list[dict[str, Any]] = field(default_factory=list)

    def listen(self, notice: psycopg.errors.Diagnostic) -> None:
        text = notice.message_primary or ""
        if "plan:" in text:
            self.seen.append(json.loads(text.split("plan:", 1)[1]))

    async def configure(self, conn: psycopg.AsyncConnection[Any]) -> None:
        conn.add_notice_handler(self.listen)

    def scans(self, partial: frozenset[str]) -> list[tuple[str, str]]:
        """(table, statement) of each read of a whole growing table: a
        sequential scan, or an index scan with no condition on an index
        that is not ``partial`` (a partial index holds only the rows of its
        predicate)."""
        found: list[tuple[str, str]] = []
        for plan in self.seen:
            for node in _nodes(plan["Plan"]):
                table = node.get("Relation Name")
                if table in GROWING and _whole(node, partial):
                    found.append((table, " ".join(plan["Query Text"].split())))
        return found


def _whole(node: dict[str, Any], partial: frozenset[str]) -> bool:
    if node["Node Type"] == "Seq Scan":
        return True
    return (
        node["Node Type"] in ("Index Scan", "Index Only Scan")
        and "Index Cond" not in node
        and node["Index Name"] not in partial
    )


def _nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [node]
    for child in node.get("Plans", ()):
        nodes.extend(_nodes(child))
    return nodes


@pytest.fixture
async def planned(empty_database: str) -> AsyncIterator[tuple[PostgresBackend, Plans]]:
    """A set-up backend on a database of its own whose every statement's plan
    is collected; a few rows in each table."""
    setup = PostgresBackend(empty_database)
    try:
        await setup.setup()
    finally:
        await setup.close()
    params = conninfo_to_dict(empty_database)
    options = f"{params.get('options', '')} {_PLANS}".strip()
    conninfo = make_conninfo(empty_database, options=options)
    plans = Plans()
    backend = PostgresBackend(conninfo)
    # The same pools the backend builds, each connection listening.
    backend.database.pool = AsyncConnectionPool(
        conninfo,
        connection_class=psycopg.AsyncConnection[DictRow],
        min_size=1,
        max_size=4,
        open=False,
        kwargs={**POOL_KWARGS, "row_factory": dict_row},
        configure=plans.configure,
    )
    queue_pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        conninfo,
        min_size=1,
        max_size=4,
        open=False,
        configure=plans.configure,
        check=AsyncConnectionPool.check_connection,
    )
    await queue_pool.open(wait=True)
    await backend.jobs.app.open_async(pool=queue_pool)  # type: ignore[attr-defined]
    backend.jobs.register(Task(TASK, _never, _no_retry))
    try:
        yield backend, plans
    finally:
        await backend.close()
        await queue_pool.close()


async def _never(args: dict[str, Any], attempts: int) -> None:
    raise AssertionError("the plans' jobs are taken, never run")


def _no_retry(error: BaseException, attempts: int, args: dict[str, Any]) -> None:
    return None


def _message(role: str, text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": role,
        "status": "completed",
        "content": [{"type": "output_text", "text": text}],
    }


def _response(previous: str | None = None) -> dict[str, Any]:
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "status": "completed",
        "background": False,
        "previous_response_id": previous,
        "output": [_message("assistant", "an answer")],
    }


Operation = Callable[[], Awaitable[object]]


async def _rows(backend: PostgresBackend) -> dict[str, Any]:
    """A little of everything: a chain of kept Responses for two tenants, a
    Conversation with items, batches, waiting jobs of two tenants and
    kinds; the ids the operations name."""
    responses, conversations = backend.responses, backend.conversations
    previous = None
    for _ in range(3):
        for scope in (TENANT, OTHER):
            response = _response(previous if scope == TENANT else None)
            await responses.save(scope, response, [_message("user", "a question")])
            if scope == TENANT:
                previous = response["id"]
    conversation = Conversation(f"conv_{uuid.uuid4().hex}", 1700000000, {})
    items = [_message("user", f"item {n}") for n in range(6)]
    await conversations.create(TENANT, conversation, items)
    for scope in (TENANT, OTHER):
        for _ in range(3):
            await backend.batches.create(
                scope,
                {"id": f"batch_{uuid.uuid4().hex}", "status": "completed"},
                _nothing,
            )
    for scope, priority in ((TENANT, Priority.BULK), (OTHER, Priority.INTERACTIVE)):
        await backend.jobs.defer([_job(scope, priority) for _ in range(3)])
    async with await backend.database.connection() as conn:
        cursor = await conn.execute(
            "SELECT id FROM lgos_batches WHERE scope = %s ORDER BY id DESC OFFSET 1",
            (TENANT,),
        )
        batch = (await cursor.fetchone())["id"]
    return {
        "response": previous,
        "output": (await responses.get(previous, TENANT))["output"][0]["id"],
        "conversation": conversation.id,
        "item": items[2]["id"],
        "batch": batch,
    }


async def _nothing(transaction: Any) -> None:
    return None


def _job(scope: str, priority: Priority) -> Job:
    lock = f"lock_{uuid.uuid4().hex}"
    return Job(TASK, {"key": lock}, lock=lock, priority=priority, tenant=scope)


def _operations(backend: PostgresBackend, ids: dict[str, Any]) -> dict[str, Operation]:
    """What must stay flat: retrieve, the lists, input items, a new turn on a
    Conversation, an item reference, a background submit and its run's
    reads and writes, a worker's take and a job's end, the queue's
    statistics, and the retention sweep."""
    responses, conversations, queue = (
        backend.responses,
        backend.conversations,
        backend.jobs,
    )
    manager = queue.app.job_manager  # type: ignore[attr-defined]
    taken: list[int] = []
    submitted = BackgroundJob(f"resp_{uuid.uuid4().hex}", TENANT, {"input": "hi"})

    async def new_turn() -> None:
        holder = f"resp_{uuid.uuid4().hex}"
        await conversations.begin_turn(ids["conversation"], TENANT, holder, lease=30)
        response = _response()
        response["id"] = holder
        await responses.save(TENANT, response, [_message("user", "more")])
        await conversations.add_items(
            ids["conversation"],
            TENANT,
            [_message("user", "more"), *response["output"]],
            response_id=holder,
            holder=holder,
        )

    async def submit() -> None:
        async def enqueue(transaction: Any) -> None:
            job = _job(TENANT, Priority.INTERACTIVE)
            await queue.defer([job], transaction)

        await responses.create(
            submitted,
            {"id": submitted.response_id, "status": "queued"},
            idempotency_key=f"key-{uuid.uuid4().hex}",
            body_digest="digest",
            enqueue=enqueue,
            input_items=[_message("user", "hi")],
            most_unfinished=128,
        )

    async def run() -> None:
        response_id = submitted.response_id
        await responses.job(response_id)
        await responses.start_attempt(response_id)
        await responses.set_snapshot(
            response_id, {"id": response_id, "status": "in_progress"}, events=[{}]
        )
        await responses.append_events(response_id, [{"type": "delta"}])
        await responses.cancel_requested(response_id)
        async for _ in responses.events(response_id, -1):
            break
        await responses.set_snapshot(
            response_id, {"id": response_id, "status": "completed"}, events=[{}]
        )

    async def take() -> None:
        worker = await manager.register_worker()
        for _ in range(2):
            job = await manager.fetch_job([QUEUE], worker)
            assert job is not None
            taken.append(job.id)

    async def end() -> None:
        from procrastinate.jobs import Status

        await manager.finish_job_by_id_async(taken[0], Status.SUCCEEDED, True)
        await manager.finish_job_by_id_async(taken[1], Status.FAILED, False)

    return {
        "retrieve": lambda: responses.get(ids["response"], TENANT),
        "input items": lambda: responses.chain(ids["response"], TENANT),
        "item reference": lambda: responses.output_items([ids["output"]], TENANT),
        "conversation items": lambda: conversations.page(
            ids["conversation"], TENANT, limit=2, order="desc", after=ids["item"]
        ),
        "conversation items, first page": lambda: conversations.page(
            ids["conversation"], TENANT, limit=2, order="asc", after=None
        ),
        "batches": lambda: backend.batches.page(TENANT, ids["batch"], 2),
        "batches, first page": lambda: backend.batches.page(TENANT, None, 2),
        "new turn": new_turn,
        "background submit": submit,
        "background run": run,
        "worker's take": take,
        "a job's end": end,
        "fair share yield": lambda: queue.outranked(Priority.BULK, TENANT),
        "queue statistics": queue.stats,
        "retention sweep": lambda: responses.delete_expired(
            dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        ),
    }


async def _partial_indexes(backend: PostgresBackend) -> frozenset[str]:
    async with await backend.database.connection() as conn:
        cursor = await conn.execute(
            "SELECT indexrelid::regclass::text AS name FROM pg_index "
            "WHERE indpred IS NOT NULL"
        )
        return frozenset(row["name"] for row in await cursor.fetchall())


async def test_every_statement_of_the_growing_paths_reads_through_an_index(planned):
    backend, plans = planned
    operations = _operations(backend, await _rows(backend))
    partial = await _partial_indexes(backend)
    scans: dict[str, list[tuple[str, str]]] = {}

    for name, operation in operations.items():
        plans.seen.clear()
        await operation()
        assert plans.seen, f"{name}: no plan reported"
        if found := plans.scans(partial):
            scans[name] = found

    assert scans == {}


async def test_a_missing_index_shows_as_a_sequential_scan(planned):
    # The check itself: without the index of a tenant's batches, listing
    # them reads the whole table.
    backend, plans = planned
    await _rows(backend)
    async with await backend.database.connection() as conn:
        await conn.execute("DROP INDEX lgos_batches_scope")
    plans.seen.clear()

    await backend.batches.page(TENANT, None, 2)

    scans = plans.scans(await _partial_indexes(backend))
    assert [table for table, _ in scans] == ["lgos_batches"]


async def test_a_turns_earlier_items_are_found_by_its_response_alone(
    planned,
):
    # Appending a turn removes what an earlier attempt of its Response
    # added. On a grown store a long Conversation's items lie one to a page,
    # so finding them through the Conversation's order alone reads a page
    # per item of the Conversation.
    backend, plans = planned
    ids = await _rows(backend)
    holder = f"resp_{uuid.uuid4().hex}"
    plans.seen.clear()

    await backend.conversations.add_items(
        ids["conversation"], TENANT, [_message("user", "more")], response_id=holder
    )

    deletes = [
        plan for plan in plans.seen if plan["Query Text"].lstrip().startswith("DELETE")
    ]
    assert len(deletes) == 1
    conditions = [
        node.get("Index Cond", "")
        for node in _nodes(deletes[0]["Plan"])
        if node.get("Relation Name") == "lgos_conversation_items"
    ]
    assert any("response_id" in condition for condition in conditions), conditions
