"""``PostgresBackend``: a fleet's persistence on one PostgreSQL.

It owns everything the deployment keeps there, the way LangGraph's
``AsyncPostgresSaver`` owns its checkpoints: the connection pool every store
shares (``database.py``), the whole schema and its migrations
(``schema.py``), the procrastinate app of the job queue (``queue.py``) and
the stores of Responses, Conversations and batches. ``setup()`` (``lgos
db-setup``) creates or migrates all of it, with procrastinate's schema and
the checkpoint tables of durable runs; run it once before API processes and
workers start.

Without the queue (``queue=False``: ``LGOS_RESPONSE_STORE=postgres`` beside
the memory background backend) Responses and Conversations are kept here
while jobs run in this process and batches live in its memory, as they
would without PostgreSQL: they could not outlive the process that runs
them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.backends.memory.batches import InMemoryBatchStore
from langgraph_openai_serve.backends.memory.jobs import InProcessQueue
from langgraph_openai_serve.backends.postgres.batches import PostgresBatchStore
from langgraph_openai_serve.backends.postgres.conversations import (
    PostgresConversationStore,
)
from langgraph_openai_serve.backends.postgres.database import (
    POOL_KWARGS,
    Database,
    bounded_conninfo,
    read_only,
)
from langgraph_openai_serve.backends.postgres.fair_fetch import QUEUE_INDEXES
from langgraph_openai_serve.backends.postgres.queue import ProcrastinateQueue
from langgraph_openai_serve.backends.postgres.queue_counts import install_counts
from langgraph_openai_serve.backends.postgres.responses import PostgresResponseStore
from langgraph_openai_serve.backends.postgres.schema import migrate
from langgraph_openai_serve.batches.protocol import BatchStore
from langgraph_openai_serve.graph.coordination import RunCoordinator
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import JobQueue
from langgraph_openai_serve.operations.readiness import Check, NotReady

if TYPE_CHECKING:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver


class PostgresBackend:
    """Every store on one pool to ``conninfo``, jobs on procrastinate.

    ``pool_size``: the pool's most connections (a running job uses one for
    its cancel watch, its events and its checkpoints, so it grows with the
    worker's concurrency); ``concurrency``: jobs running at once in this
    process when there is no queue; ``stalled_timeout``: seconds without a
    heartbeat after which a worker's jobs run again; ``count_reruns``: count
    the stalled jobs this process puts back (metrics are on); ``timeout``:
    the seconds one database operation of a store may take, its pool
    checkout included (``None``: unbounded); ``connect_timeout``: the seconds
    a new connection may take; ``queue_wait``: the seconds the queue's own
    connections (a worker's heartbeat, fetches and listener) wait for the
    database before its worker starts over; ``checkpoint_timeout``: the
    seconds one checkpoint read or write of a durable run may take;
    ``fair``: how workers share their slots between tenants.
    """

    def __init__(
        self,
        conninfo: str,
        *,
        pool_size: int = 12,
        queue: bool = True,
        concurrency: int = 8,
        stalled_timeout: float = 30.0,
        count_reruns: bool = False,
        timeout: float | None = 5.0,
        connect_timeout: int = 3,
        queue_wait: float = 30.0,
        checkpoint_timeout: float | None = 30.0,
        fair: FairShare | None = None,
    ) -> None:
        from psycopg import AsyncConnection
        from psycopg.rows import DictRow, dict_row
        from psycopg_pool import AsyncConnectionPool

        conninfo = bounded_conninfo(conninfo, connect_timeout)
        self.checkpoint_timeout = checkpoint_timeout
        self.conninfo = conninfo
        self.database = Database(
            AsyncConnectionPool(
                conninfo,
                connection_class=AsyncConnection[DictRow],
                min_size=2,
                max_size=pool_size,
                open=False,
                timeout=timeout if timeout is not None else 30.0,
                kwargs={**POOL_KWARGS, "row_factory": dict_row},
            ),
            deadline=timeout,
        )
        self.responses = PostgresResponseStore(self.database)
        self.conversations = PostgresConversationStore(self.database)
        self.batches: BatchStore
        self.jobs: JobQueue
        self._queue: ProcrastinateQueue | None = None
        if queue:
            import procrastinate

            from langgraph_openai_serve.backends.postgres.fair_fetch import (
                FairJobManager,
            )

            app = procrastinate.App(
                connector=procrastinate.PsycopgConnector(
                    conninfo=conninfo, timeout=queue_wait
                )
            )
            fair = fair or FairShare()
            app.job_manager = FairJobManager(app.connector, fair)
            self.jobs = self._queue = ProcrastinateQueue(
                app,
                conninfo,
                self.database.connection,
                stalled_timeout=stalled_timeout,
                count_reruns=count_reruns,
                fair=fair,
            )
            self.batches = PostgresBatchStore(self.database)
        else:
            self.jobs = InProcessQueue(concurrency, fair)
            self.batches = InMemoryBatchStore()
        self._saver: AsyncPostgresSaver | None = None

    @property
    def pool(self) -> Any:
        """The pool every store shares."""
        return self.database.pool

    def checkpointer(self) -> BaseCheckpointSaver[Any] | None:
        """LangGraph's saver on the pool, for durable runs of the queue's
        workers (``None`` without the queue: a run dies with its process)."""
        return self._checkpoints() if self._queue is not None else None

    def _checkpoints(self) -> AsyncPostgresSaver:
        if self._saver is None:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            from langgraph_openai_serve.backends.postgres.checkpoints import (
                BoundedSaver,
            )

            deadline = self.checkpoint_timeout
            self._saver = (
                AsyncPostgresSaver(self.database.pool)
                if deadline is None
                else BoundedSaver(self.database.pool, deadline=deadline)
            )
        return self._saver

    def run_coordinator(self, *, max_concurrent_leases: int = 4) -> RunCoordinator:
        from langgraph_openai_serve.integrations.postgres import (
            PostgresRunCoordinator,
        )

        return _OnOpenPool(
            self.database,
            PostgresRunCoordinator(
                self.database.pool, max_concurrent_leases=max_concurrent_leases
            ),
        )

    def checks(self) -> dict[str, Check]:
        tables = _Tables(self.database)
        if self._queue is None:
            return {"postgres": tables.responses}
        return {"postgres": tables.responses, "queue": tables.queue}

    async def setup(self) -> None:
        """Create or migrate LGOS's tables, procrastinate's schema (with the
        queue) and the checkpoint tables of durable runs; idempotent."""
        async with await self.database.connection(deadline=None) as conn:
            await migrate(conn)
        if self._queue is not None:
            await self._setup_queue(self._queue)
            await self._checkpoints().setup()

    async def _setup_queue(self, queue: ProcrastinateQueue) -> None:
        """Apply procrastinate's schema unless it exists (it is not
        idempotent itself), then the indexes LGOS's fetch reads through."""
        async with await self.database.connection() as conn:
            cursor = await conn.execute(
                "SELECT to_regclass('procrastinate_jobs') IS NOT NULL AS ok"
            )
            row = await cursor.fetchone()
        if row is None or not row["ok"]:
            await queue.open()
            await queue.app.schema_manager.apply_schema_async()
        async with await self.database.connection(deadline=None) as conn:
            for index in QUEUE_INDEXES:
                await conn.execute(index)
            await install_counts(conn)

    async def close(self) -> None:
        await self.jobs.close()
        await self.responses.close()
        await self.database.close()


class _Tables:
    """Readiness reads: the tables answer, on the backend's pool (its
    deadline, and a read sent again on a checked pool after a reset), never
    on procrastinate's own, which takes seconds to replace connections a
    reset broke while readiness must answer within one."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @read_only
    async def responses(self) -> None:
        if not await self._exists("lgos_background_responses"):
            raise NotReady(
                "the response tables are missing: run lgos db-setup",
                code="schema_missing",
            )

    @read_only
    async def queue(self) -> None:
        if not await self._exists("procrastinate_jobs"):
            raise NotReady(
                "the queue's tables are missing: run lgos db-setup",
                code="schema_missing",
            )

    async def _exists(self, table: str) -> bool:
        async with await self._database.connection() as conn:
            cursor = await conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL AS ok", (table,)
            )
            row = await cursor.fetchone()
        return row is not None and bool(row["ok"])


class _OnOpenPool:
    """A coordinator whose leases open the backend's pool first (it opens
    on first use, inside the event loop)."""

    def __init__(self, database: Database, coordinator: RunCoordinator) -> None:
        self._database = database
        self._coordinator = coordinator

    def lease(self, key: str) -> AbstractAsyncContextManager[None]:
        return self._lease(key)

    @asynccontextmanager
    async def _lease(self, key: str) -> AsyncIterator[None]:
        await self._database.open()
        async with self._coordinator.lease(key):
            yield
