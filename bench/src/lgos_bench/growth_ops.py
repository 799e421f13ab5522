"""The operations ``lgos-bench growth`` times, each on the library's own
PostgreSQL stores and queue (``PostgresBackend``), as the API and a worker
call them.

Each operation is what its route or worker does with the database: the
statements, their round trips and the decoding of their rows. Its request's
parsing, its graph run and its JSON answer cost the same on any database, so
they are left out: they would only dilute the ratio the bench is after.
What an operation writes is undone after it, untimed (a turn's items
removed, a submitted Response ended and its job dropped, a taken job
queued anew), so the thousandth try meets the database the first did.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.backends.postgres import PostgresBackend
from langgraph_openai_serve.backends.postgres.fair_fetch import QUEUE
from langgraph_openai_serve.backends.postgres.queue import ProcrastinateQueue
from langgraph_openai_serve.jobs.protocol import Task
from langgraph_openai_serve.openai.responses.background.task import (
    TASK_NAME,
    response_job,
)
from langgraph_openai_serve.openai.responses.input_items import items_page, used_items
from langgraph_openai_serve.responses.protocol import BackgroundJob

from lgos_bench.growth_data import SUBJECT, Shape, conversation_id, response_id

TENANT_LIMIT = 128
"""``LGOS_TENANT_MAX_BACKGROUND``'s default: a submit counts the tenant's
unfinished Responses against it."""
PAGE = 20
"""The lists' default page size."""

Call = Callable[[], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Steps:
    """One try of an operation: ``prepare`` and ``undo`` are not timed."""

    timed: Call
    undo: Call | None = None


@dataclass(frozen=True, slots=True)
class Operation:
    name: str
    what: str
    """What it does, for the report."""
    steps: Callable[[], Awaitable[Steps]]
    """Prepares one try (untimed) and gives its steps."""


@dataclass
class Subject:
    """The subject's rows in one database, and the cursors of its deep pages."""

    backend: PostgresBackend
    worker_id: int = 0
    response: str = ""
    output_item: str = ""
    input_after: str = ""
    conversation: str = ""
    conversation_after: str = ""
    batches_after: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _message(role: str, text: str) -> dict[str, Any]:
    kind = "input_text" if role == "user" else "output_text"
    return {
        "id": f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": role,
        "status": "completed",
        "content": [{"type": kind, "text": text}],
    }


async def _noop(args: dict[str, Any], attempts: int) -> None:
    """Never runs: the bench takes jobs, it does not run them."""


def _no_retry(error: BaseException, attempts: int, args: dict[str, Any]) -> None:
    return None


async def open_subject(url: str, shape: Shape) -> Subject:
    """A backend on ``url`` (its queue open, a worker registered) and the
    subject's ids and cursors, read from the database."""
    backend = PostgresBackend(url, timeout=None)
    queue = backend.jobs
    assert isinstance(queue, ProcrastinateQueue)
    queue.register(Task(TASK_NAME, _noop, _no_retry))
    await queue.open()
    manager = queue.app.job_manager
    subject = Subject(backend, worker_id=await manager.register_worker())
    subject.response = response_id(0, shape.chain - 1)
    chain = await backend.responses.chain(subject.response, SUBJECT)
    if chain is None:
        raise RuntimeError(f"the subject Response {subject.response} is missing")
    items = used_items(chain)
    subject.input_after = items[len(items) // 3]["id"]
    subject.output_item = chain[0].response["output"][0]["id"]
    subject.conversation = conversation_id(0)
    history = await backend.conversations.items(subject.conversation, SUBJECT)
    if not history:
        raise RuntimeError("the subject Conversation is missing")
    subject.conversation_after = history[len(history) // 4]["id"]
    async with await backend.database.connection() as conn:
        cursor = await conn.execute(
            "SELECT id FROM lgos_batches WHERE scope = %s "
            "ORDER BY id DESC OFFSET %s LIMIT 1",
            (SUBJECT, shape.batches_per_tenant * 4 // 5),
        )
        row = await cursor.fetchone()
    if row is None:
        raise RuntimeError("the subject tenant has too few batches")
    subject.batches_after = row["id"]
    return subject


async def close_subject(subject: Subject) -> None:
    await subject.backend.close()


def operations(subject: Subject) -> list[Operation]:
    """Every operation measured, on ``subject``'s database."""
    backend = subject.backend
    responses, conversations = backend.responses, backend.conversations
    batches, queue = backend.batches, backend.jobs
    manager = queue.app.job_manager  # type: ignore[attr-defined]

    async def execute(statement: str, params: tuple[Any, ...]) -> None:
        async with await backend.database.connection() as conn:
            await conn.execute(statement, params)

    def read(call: Call) -> Callable[[], Awaitable[Steps]]:
        async def steps() -> Steps:
            return Steps(call)

        return steps

    async def input_items(after: str | None) -> dict[str, Any]:
        chain = await responses.chain(subject.response, SUBJECT)
        assert chain is not None
        return items_page(used_items(chain), limit=PAGE, order="desc", after=after)

    async def new_turn() -> Steps:
        holder = f"resp_{uuid.uuid4().hex}"
        asked = [_message("user", "One more question about the same thing.")]
        answer = _message("assistant", "One more answer, " * 8)
        response = {
            "id": holder,
            "object": "response",
            "status": "completed",
            "background": False,
            "store": True,
            "model": "bench-plain",
            "previous_response_id": None,
            "conversation": {"id": subject.conversation},
            "output": [answer],
        }

        async def timed() -> None:
            history = await conversations.begin_turn(
                subject.conversation, SUBJECT, holder, lease=30.0
            )
            assert history is not None
            await responses.save(SUBJECT, response, asked)
            await conversations.add_items(
                subject.conversation,
                SUBJECT,
                [*asked, answer],
                response_id=holder,
                holder=holder,
            )

        async def undo() -> None:
            await execute(
                "DELETE FROM lgos_conversation_items "
                "WHERE conversation_id = %s AND response_id = %s",
                (subject.conversation, holder),
            )

        return Steps(timed, undo)

    async def submit() -> Steps:
        submitted = f"resp_{uuid.uuid4().hex}"
        job = BackgroundJob(
            response_id=submitted,
            scope=SUBJECT,
            body={"model": "bench-plain", "input": "hello", "background": True},
            run_id=None,
            trace={},
        )
        snapshot = {
            "id": submitted,
            "object": "response",
            "status": "queued",
            "background": True,
            "output": [],
        }

        async def enqueue(transaction: Any) -> None:
            await queue.defer(
                [response_job(submitted, SUBJECT, first=True)], transaction
            )

        async def timed() -> None:
            await responses.create(
                job,
                snapshot,
                idempotency_key=f"bench-{submitted}",
                body_digest="digest",
                enqueue=enqueue,
                input_items=[_message("user", "hello")],
                most_unfinished=TENANT_LIMIT,
            )

        async def undo() -> None:
            await execute(
                "DELETE FROM procrastinate_jobs WHERE lock = %s AND status = 'todo'",
                (submitted,),
            )
            await execute(
                "UPDATE lgos_background_responses SET snapshot = "
                "jsonb_set(snapshot, '{status}', '\"completed\"') WHERE id = %s",
                (submitted,),
            )

        return Steps(timed, undo)

    async def take() -> Steps:
        # A job of the subject tenant's waits (on the grown database among
        # the others, which may be taken first).
        waiting = f"resp_{uuid.uuid4().hex}"
        await queue.defer([response_job(waiting, SUBJECT)])
        taken: list[int] = []

        async def timed() -> None:
            job = await manager.fetch_job([QUEUE], subject.worker_id)
            assert job is not None
            assert job.id is not None
            taken.append(job.id)

        async def undo() -> None:
            # The queue keeps its shape: a job taken from the others waits
            # again, as a new job of its tenant and class (the subject's
            # goes). Were taken jobs dropped, the empty database's sixteen
            # would be gone after sixteen tries, leaving one (tenant,
            # class) waiting there against the grown one's sixteen; were
            # they put back as they were, one job would gather the events
            # of every try.
            await execute(
                "WITH gone AS (DELETE FROM procrastinate_jobs WHERE id = ANY(%s) "
                "RETURNING *) INSERT INTO procrastinate_jobs "
                "(queue_name, task_name, priority, lock, queueing_lock, args) "
                "SELECT queue_name, task_name, priority, lock, queueing_lock, args "
                "FROM gone WHERE lock <> %s",
                (taken, waiting),
            )
            await execute("DELETE FROM procrastinate_jobs WHERE lock = %s", (waiting,))

        return Steps(timed, undo)

    return [
        Operation(
            "retrieve",
            "GET /v1/responses/{id}: the snapshot",
            read(lambda: responses.get(subject.response, SUBJECT)),
        ),
        Operation(
            "input_items, first page",
            "GET /v1/responses/{id}/input_items: the chain of 20, its first page",
            read(lambda: input_items(None)),
        ),
        Operation(
            "input_items, deep page",
            "the same, after the item a third of the way in",
            read(lambda: input_items(subject.input_after)),
        ),
        Operation(
            "conversation items, first page",
            "GET /v1/conversations/{id}/items: 200 items, newest 20",
            read(
                lambda: conversations.page(
                    subject.conversation, SUBJECT, limit=PAGE, order="desc", after=None
                )
            ),
        ),
        Operation(
            "conversation items, deep page",
            "the same, after the item a quarter of the way in",
            read(
                lambda: conversations.page(
                    subject.conversation,
                    SUBJECT,
                    limit=PAGE,
                    order="desc",
                    after=subject.conversation_after,
                )
            ),
        ),
        Operation(
            "batches, first page",
            "GET /v1/batches: the tenant's newest 20",
            read(lambda: batches.page(SUBJECT, None, PAGE)),
        ),
        Operation(
            "batches, deep page",
            "the same, after four fifths of the tenant's batches",
            read(lambda: batches.page(SUBJECT, subject.batches_after, PAGE)),
        ),
        Operation(
            "item_reference",
            "an input item_reference: a kept output item found by its id",
            read(lambda: responses.output_items([subject.output_item], SUBJECT)),
        ),
        Operation(
            "new turn, conversation of 200",
            "claim and read the history, keep the Response, add the turn",
            new_turn,
        ),
        Operation(
            "background submit",
            "POST /v1/responses background: key, limit, Response and job",
            submit,
        ),
        Operation(
            "worker's take",
            "the fair-share fetch of a free worker slot",
            take,
        ),
        Operation(
            "queue statistics",
            "what a /metrics scrape reads of the queue",
            read(queue.stats),
        ),
    ]
