"""One conformance suite for every ``JobQueue`` (``jobs/protocol.py``): the
in-process queue and procrastinate's. Each test runs over both backends (the
``backend`` fixture of ``backend_fixtures.py``), with the backend's jobs
running as they do in a deployment (``jobs_running``); the durable queue's
own promises (transactions, hand-back, stalled workers) follow, on
PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from backend_fixtures import PostgresBackendFactory, jobs_running
from langgraph_openai_serve.backends.memory.jobs import InProcessQueue
from langgraph_openai_serve.jobs.fairness import FairShare
from langgraph_openai_serve.jobs.protocol import Job, JobArgs, JobQueue, Priority, Task
from langgraph_openai_serve.jobs.retry import every
from langgraph_openai_serve.observability.queue import WorkCount
from langgraph_openai_serve.operations.readiness import NotReady

pytestmark = pytest.mark.anyio

PROMPT = 30.0
"""Every wait here is for something that happens promptly."""


class Recorder:
    """A task whose jobs record their arguments and attempts, and wait for
    ``release`` when their arguments say ``hold``."""

    def __init__(self, name: str = "lgos.test_job") -> None:
        self.name = name
        self.runs: list[tuple[str, int]] = []
        self.arguments: dict[str, JobArgs] = {}
        self.started: dict[str, asyncio.Event] = {}
        self.finished: dict[str, asyncio.Event] = {}
        self.release: dict[str, asyncio.Event] = {}
        self.running = 0
        self.most_at_once = 0

    def _event(self, events: dict[str, asyncio.Event], key: str) -> asyncio.Event:
        return events.setdefault(key, asyncio.Event())

    async def run(self, args: JobArgs, attempts: int) -> None:
        key = args["key"]
        self.runs.append((key, attempts))
        self.arguments[key] = dict(args)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self._event(self.started, key).set()
        try:
            if args.get("hold"):
                await self._event(self.release, key).wait()
            if attempts < args.get("fail", 0):
                raise RuntimeError(f"attempt {attempts} of {key} fails")
        finally:
            self.running -= 1
        self._event(self.finished, key).set()

    async def wait(self, events: dict[str, asyncio.Event], key: str) -> None:
        await asyncio.wait_for(self._event(events, key).wait(), PROMPT)

    def task(
        self,
        retry: Callable[[BaseException, int, JobArgs], float | None] | None = None,
        abandoned: Callable[[JobArgs], Awaitable[None]] | None = None,
    ) -> Task:
        return Task(self.name, self.run, retry or every(0.0), abandoned)

    def job(self, key: str, **args: Any) -> Job:
        lock = args.pop("lock", None)
        queueing_lock = args.pop("queueing_lock", None)
        priority = args.pop("priority", Priority.STEP)
        tenant = args.pop("tenant", None)
        return Job(
            self.name, {"key": key, **args}, lock, queueing_lock, priority, tenant
        )

    def free(self, key: str) -> None:
        """Let ``key``'s job end once it holds (now, if it does)."""
        self._event(self.release, key).set()

    def started_keys(self) -> list[str]:
        return [key for key, _ in self.runs]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@contextlib.asynccontextmanager
async def one_slot(backend: Any, on_postgres: bool) -> AsyncIterator[JobQueue]:
    """The backend's kind of queue with one slot: a worker of one on
    PostgreSQL, an in-process queue of one otherwise."""
    if on_postgres:
        async with jobs_running(backend, concurrency=1):
            yield backend.jobs
        return
    queue = InProcessQueue(1)
    try:
        yield queue
    finally:
        await queue.close()


@pytest.fixture
def slots(
    backend: Any,
    on_postgres: bool,
    postgres_backend_factory: PostgresBackendFactory,
) -> Callable[..., contextlib.AbstractAsyncContextManager[JobQueue]]:
    """The ``backend``'s kind of queue with ``concurrency`` slots shared as
    ``fair`` says: a worker on PostgreSQL, an in-process queue otherwise."""
    del backend  # its parameter chooses the kind

    @contextlib.asynccontextmanager
    async def make(concurrency: int, fair: FairShare) -> AsyncIterator[JobQueue]:
        if on_postgres:
            own = await postgres_backend_factory(fair=fair)
            async with jobs_running(own, concurrency=concurrency):
                yield own.jobs
            return
        queue = InProcessQueue(concurrency, fair)
        try:
            yield queue
        finally:
            await queue.close()

    return make


async def test_a_queued_job_runs_with_its_arguments(backend, recorder):
    backend.jobs.register(recorder.task())

    async with jobs_running(backend):
        assert await backend.jobs.defer([recorder.job("a", extra=[1, "two"])]) == 1
        await recorder.wait(recorder.finished, "a")

    assert recorder.runs == [("a", 0)]


async def test_a_job_of_a_tenant_runs_with_its_own_arguments_only(backend, recorder):
    backend.jobs.register(recorder.task())

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("a", extra=1, tenant="alice")])
        await recorder.wait(recorder.finished, "a")

    assert recorder.arguments["a"] == {"key": "a", "extra": 1}


async def test_jobs_sharing_a_lock_never_run_at_once(backend, recorder):
    backend.jobs.register(recorder.task())

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("first", lock="L", hold=True)])
        await recorder.wait(recorder.started, "first")
        await backend.jobs.defer([recorder.job("second", lock="L")])
        await backend.jobs.defer([recorder.job("free", lock="other")])
        await recorder.wait(recorder.finished, "free")
        assert "second" not in recorder.started  # it waits for the lock
        recorder.release["first"].set()
        await recorder.wait(recorder.finished, "second")

    assert recorder.most_at_once == 2  # ``first`` beside ``free``, never ``second``
    assert [key for key, _ in recorder.runs].index("second") > 0


async def test_a_job_whose_queueing_lock_waits_already_is_not_queued(backend, recorder):
    backend.jobs.register(recorder.task())

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("holder", lock="L", hold=True)])
        await recorder.wait(recorder.started, "holder")
        # ``waiting`` cannot start while ``holder`` has the lock.
        first = await backend.jobs.defer(
            [recorder.job("waiting", lock="L", queueing_lock="Q")]
        )
        again = await backend.jobs.defer(
            [recorder.job("again", lock="L", queueing_lock="Q")]
        )
        recorder.release["holder"].set()
        await recorder.wait(recorder.finished, "waiting")
        # Once it runs, its queueing lock is free again.
        later = await backend.jobs.defer([recorder.job("later", queueing_lock="Q")])
        await recorder.wait(recorder.finished, "later")

    assert (first, again, later) == (1, 0, 1)
    assert "again" not in recorder.started


async def test_a_failing_job_runs_again_after_its_policy_with_its_attempts(
    backend, recorder
):
    backend.jobs.register(recorder.task(every(0.0)))

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("flaky", fail=2)])
        await recorder.wait(recorder.finished, "flaky")

    assert recorder.runs == [("flaky", 0), ("flaky", 1), ("flaky", 2)]


async def test_a_job_its_policy_gives_up_on_is_abandoned_once(backend, recorder):
    abandoned: list[JobArgs] = []
    gave_up = asyncio.Event()

    async def abandon(args: JobArgs) -> None:
        abandoned.append(args)
        gave_up.set()

    def twice(error: BaseException, attempts: int, args: JobArgs) -> float | None:
        return 0.0 if attempts < 1 else None

    backend.jobs.register(recorder.task(twice, abandon))

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("doomed", fail=10)])
        await asyncio.wait_for(gave_up.wait(), PROMPT)

    assert recorder.runs == [("doomed", 0), ("doomed", 1)]
    assert abandoned == [{"key": "doomed", "fail": 10}]


async def test_cancel_drops_a_waiting_job_and_says_whether_one_runs(backend, recorder):
    backend.jobs.register(recorder.task())
    name = recorder.name

    async with jobs_running(backend):
        await backend.jobs.defer([recorder.job("running", lock="L", hold=True)])
        await recorder.wait(recorder.started, "running")
        await backend.jobs.defer([recorder.job("blocker", lock="W", hold=True)])
        await recorder.wait(recorder.started, "blocker")
        await backend.jobs.defer([recorder.job("dropped", lock="W")])

        live_before = await backend.jobs.live(name, "W")
        nobody_runs_dropped = await backend.jobs.cancel(name, "W")
        nobody_runs_running = await backend.jobs.cancel(name, "L")
        recorder.release["blocker"].set()
        recorder.release["running"].set()
        await recorder.wait(recorder.finished, "running")
        await recorder.wait(recorder.finished, "blocker")

    # ``blocker`` runs under W: the cancel says so; ``dropped`` never runs.
    assert (live_before, nobody_runs_dropped, nobody_runs_running) == (
        True,
        False,
        False,
    )
    assert "dropped" not in recorder.started
    assert not await backend.jobs.live(name, "nothing")
    assert await backend.jobs.cancel(name, "nothing") is True


async def test_stats_count_waiting_and_running_jobs(backend, recorder):
    backend.jobs.register(recorder.task())

    async with jobs_running(backend):
        busy = recorder.job("busy", lock="L", hold=True, tenant="a")
        await backend.jobs.defer([busy])
        await recorder.wait(recorder.started, "busy")
        await backend.jobs.defer(
            [
                recorder.job("w1", lock="L", priority=Priority.BULK, tenant="a"),
                recorder.job("w2", lock="L", priority=Priority.INTERACTIVE),
            ]
        )
        stats = await backend.jobs.stats()
        recorder.release["busy"].set()
        await recorder.wait(recorder.finished, "w2")

    assert (stats.ready, stats.running) == (2, 1)
    assert stats.oldest_ready_seconds >= 0
    assert sorted(stats.work, key=lambda count: (count.work, count.tenant)) == [
        WorkCount("bulk", "a", 1, 0),
        WorkCount("interactive", "", 1, 0),
        WorkCount("step", "a", 0, 1),
    ]


# --- the durable queue: PostgreSQL ------------------------------------------


async def test_a_job_queued_in_a_rolled_back_transaction_never_exists(
    postgres_backend_factory, recorder
):
    backend = await postgres_backend_factory()
    backend.jobs.register(recorder.task())

    class Rollback(Exception):
        pass

    async def queue_then_roll_back() -> None:
        async with await backend.database.connection() as conn, conn.transaction():
            await backend.jobs.defer([recorder.job("ghost", lock="G")], conn)
            assert await backend.jobs.live(recorder.name, "G") is False  # unseen
            raise Rollback

    with pytest.raises(Rollback):
        await queue_then_roll_back()

    assert await backend.jobs.live(recorder.name, "G") is False


async def test_a_workers_fetch_leaves_its_reserved_slots_to_urgent_work(
    postgres_backend_factory, recorder
):
    # The fetch itself, without a worker loop (whose timing would decide
    # which of two waiting jobs it saw first).
    backend = await postgres_backend_factory(fair=FairShare(reserved=1))
    backend.jobs.register(recorder.task())
    manager = backend.jobs.app.job_manager
    manager.regular_slots = 1
    await backend.jobs.open()
    worker_id = await manager.register_worker()
    await backend.jobs.defer([recorder.job("first", priority=Priority.BULK)])
    await backend.jobs.defer([recorder.job("second", priority=Priority.BULK)])

    first = await manager.fetch_job(None, worker_id)
    none_left = await manager.fetch_job(None, worker_id)  # the regular slot is used
    await backend.jobs.defer([recorder.job("urgent", priority=Priority.INTERACTIVE)])
    urgent = await manager.fetch_job(None, worker_id)

    assert first is not None
    assert first.task_kwargs["key"] == "first"
    assert none_left is None
    assert urgent is not None
    assert urgent.task_kwargs["key"] == "urgent"


async def test_a_stopping_worker_hands_its_job_back_to_the_next(
    postgres_backend_factory, recorder
):
    backend = await postgres_backend_factory()
    backend.jobs.register(recorder.task())

    async with jobs_running(backend, shutdown_timeout=0.1):
        await backend.jobs.defer([recorder.job("long", hold=True)])
        await recorder.wait(recorder.started, "long")
    # The worker stopped (its shutdown timeout passed): the job went back.
    assert recorder.runs == [("long", 0)]
    recorder.started.pop("long")
    recorder.release["long"].set()

    async with jobs_running(backend):
        await recorder.wait(recorder.finished, "long")

    assert recorder.runs == [("long", 0), ("long", 1)]


async def test_a_silent_workers_job_runs_again_after_the_sweep(
    postgres_backend_factory, postgres_uri, recorder
):
    backend = await postgres_backend_factory(stalled_timeout=30.0)
    backend.jobs.register(recorder.task())
    await backend.jobs.defer([recorder.job("orphan")])
    manager = backend.jobs.app.job_manager
    dead = await manager.register_worker()
    taken = await manager.fetch_job(["lgos_background"], dead)
    assert taken is not None
    # Its worker died long ago: no heartbeat for an hour.
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute(
            "UPDATE procrastinate_workers "
            "SET last_heartbeat = now() - interval '1 hour' WHERE id = %s",
            (dead,),
        )

    assert await backend.jobs.retry_stalled_jobs() == [taken.id]
    async with jobs_running(backend):
        await recorder.wait(recorder.finished, "orphan")

    assert recorder.runs == [("orphan", 1)]  # the lost attempt counts


async def test_stats_age_a_put_back_job_from_its_return_and_skip_scheduled_ones(
    postgres_backend_factory, postgres_uri, recorder
):
    # The statistics read the first job of a line queued once, and every
    # job put back or scheduled: here the line's first job by id was put
    # back a moment ago, while the one behind it has waited 100 s.
    backend = await postgres_backend_factory()
    backend.jobs.register(recorder.task())
    manager = backend.jobs.app.job_manager
    await backend.jobs.defer([recorder.job("back", lock="B", tenant="a")])
    taken = await manager.fetch_job(None, await manager.register_worker())
    await backend.jobs.defer([recorder.job("waiting", lock="W", tenant="a")])
    await backend.jobs.defer([recorder.job("later", lock="S", tenant="a")])
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute(
            "UPDATE procrastinate_events SET at = now() - interval '300 seconds'"
        )
        conn.execute(
            "UPDATE procrastinate_events SET at = now() - interval '100 seconds' "
            "FROM procrastinate_jobs j WHERE j.id = job_id AND j.lock = 'W'"
        )
        conn.execute(
            "UPDATE procrastinate_jobs SET scheduled_at = now() + interval '1 hour' "
            "WHERE lock = 'S'"
        )
    await manager.retry_job_by_id_async(taken.id, retry_at=datetime.now(UTC))

    stats = await backend.jobs.stats()

    assert (stats.ready, stats.running) == (2, 0)
    assert 100 <= stats.oldest_ready_seconds < 100 + PROMPT


async def test_a_running_worker_heartbeats_and_a_stopped_one_is_not_ready(
    postgres_backend_factory, recorder
):
    backend = await postgres_backend_factory()
    backend.jobs.register(recorder.task())
    worker = backend.jobs.worker(
        concurrency=1,
        shutdown_timeout=1.0,
        heartbeat_interval=0.2,
        stalled_check_interval=3600.0,
    )
    with pytest.raises(NotReady, match="not registered"):
        await worker.check()
    running = asyncio.create_task(worker.run())
    # Once it takes a job it is registered; its heartbeat keeps it ready.
    await backend.jobs.defer([recorder.job("seen")])
    await recorder.wait(recorder.finished, "seen")
    await worker.check()
    worker.stop()
    await running

    with pytest.raises(NotReady):
        await worker.check()


async def test_a_free_slot_takes_the_waiting_job_of_highest_priority_first(
    backend, on_postgres, recorder
):
    async with one_slot(backend, on_postgres) as jobs:
        jobs.register(recorder.task())
        await jobs.defer([recorder.job("holder", hold=True)])
        await recorder.wait(recorder.started, "holder")
        await jobs.defer([recorder.job("bulk", priority=Priority.BULK)])
        await jobs.defer([recorder.job("step", priority=Priority.STEP)])
        await jobs.defer([recorder.job("urgent", priority=Priority.INTERACTIVE)])
        await jobs.defer([recorder.job("step-2", priority=Priority.STEP)])
        recorder.release["holder"].set()
        await recorder.wait(recorder.finished, "bulk")

    # Queued in another order: taken by priority, then in the order queued.
    assert [key for key, _ in recorder.runs] == [
        "holder",
        "urgent",
        "step",
        "step-2",
        "bulk",
    ]


async def test_outranked_sees_a_waiting_job_of_higher_priority_only(
    backend, on_postgres, recorder
):
    async with one_slot(backend, on_postgres) as jobs:
        jobs.register(recorder.task())
        holder = recorder.job("holder", lock="H", hold=True, priority=Priority.BULK)
        await jobs.defer([holder])
        await recorder.wait(recorder.started, "holder")
        alone = await jobs.outranked(Priority.BULK, None)
        await jobs.defer([recorder.job("bulk", priority=Priority.BULK)])
        await jobs.defer([recorder.job("blocked", lock="H")])  # its lock is taken
        behind_bulk_and_lock = await jobs.outranked(Priority.BULK, None)
        await jobs.defer([recorder.job("step", lock="S")])
        behind_step = await jobs.outranked(Priority.BULK, None)
        above_step = await jobs.outranked(Priority.STEP, None)
        recorder.release["holder"].set()
        await recorder.wait(recorder.finished, "bulk")

    assert alone is False
    assert behind_bulk_and_lock is False
    assert behind_step is True
    assert above_step is False


async def test_a_free_slot_goes_to_the_tenant_running_fewest_jobs(slots, recorder):
    async with slots(2, FairShare()) as jobs:
        jobs.register(recorder.task())
        for key in ("a-1", "a-2"):
            await jobs.defer([recorder.job(key, hold=True, tenant="a")])
            await recorder.wait(recorder.started, key)
        # Queued all of a's first: the order of arrival is not the order run.
        for key in ("a-3", "a-4", "b-1", "b-2"):
            tenant = key.split("-")[0]
            await jobs.defer([recorder.job(key, hold=True, tenant=tenant)])
        for done, next_one in (("a-1", "b-1"), ("a-2", "a-3"), ("b-1", "b-2")):
            recorder.free(done)
            await recorder.wait(recorder.started, next_one)
        for key in ("a-3", "b-2"):
            recorder.free(key)
        await recorder.wait(recorder.started, "a-4")
        recorder.free("a-4")
        await recorder.wait(recorder.finished, "a-4")

    # b waited for one of a's slots only; then a and b took turns.
    assert recorder.started_keys() == ["a-1", "a-2", "b-1", "a-3", "b-2", "a-4"]


async def test_a_tenant_weighing_twice_gets_twice_the_slots(slots, recorder):
    async with slots(3, FairShare(weights={"b": 2.0})) as jobs:
        jobs.register(recorder.task())
        # Alone, a tenant takes every slot.
        for key in ("a-1", "a-2", "a-3"):
            await jobs.defer([recorder.job(key, hold=True, tenant="a")])
            await recorder.wait(recorder.started, key)
        for key in ("a-4", "a-5", "b-1", "b-2", "b-3"):
            tenant = key.split("-")[0]
            await jobs.defer([recorder.job(key, hold=True, tenant=tenant)])
        for done, next_one in (("a-1", "b-1"), ("a-2", "b-2"), ("a-3", "a-4")):
            recorder.free(done)
            await recorder.wait(recorder.started, next_one)
        started = recorder.started_keys()
        b_running = {"b-1", "b-2"} <= set(started) and "b-3" not in started
        for key in ("a-4", "a-5", "b-1", "b-2", "b-3"):
            recorder.free(key)
        await recorder.wait(recorder.finished, "b-3")
        await recorder.wait(recorder.finished, "a-5")

    # With a slot each gone, b held two of three: its weight's share.
    assert b_running
    assert recorder.started_keys()[:6] == ["a-1", "a-2", "a-3", "b-1", "b-2", "a-4"]


async def test_a_job_that_waited_long_rises_above_fresh_urgent_work(slots, recorder):
    aging = 0.25
    async with slots(1, FairShare(aging=aging)) as jobs:
        jobs.register(recorder.task())
        await jobs.defer([recorder.job("holder", hold=True, tenant="a")])
        await recorder.wait(recorder.started, "holder")
        await jobs.defer([recorder.job("bulk", priority=Priority.BULK, tenant="a")])
        # Two aging periods: a line rises to the class of a background run.
        # (A slower machine only makes it wait longer, never less.)
        await asyncio.sleep(2.5 * aging)
        await jobs.defer(
            [recorder.job("urgent", priority=Priority.INTERACTIVE, tenant="a")]
        )
        aged_outranks = await jobs.outranked(Priority.STEP, "b")
        recorder.free("holder")
        await recorder.wait(recorder.finished, "urgent")

    assert aged_outranks is True
    assert recorder.started_keys() == ["holder", "bulk", "urgent"]


async def test_without_aging_fresh_urgent_work_goes_first(slots, recorder):
    async with slots(1, FairShare(aging=None)) as jobs:
        jobs.register(recorder.task())
        await jobs.defer([recorder.job("holder", hold=True, tenant="a")])
        await recorder.wait(recorder.started, "holder")
        await jobs.defer([recorder.job("bulk", priority=Priority.BULK, tenant="a")])
        await asyncio.sleep(0.6)
        await jobs.defer(
            [recorder.job("urgent", priority=Priority.INTERACTIVE, tenant="a")]
        )
        recorder.free("holder")
        await recorder.wait(recorder.finished, "bulk")

    assert recorder.started_keys() == ["holder", "urgent", "bulk"]


async def test_a_reserved_slot_takes_only_urgent_work(slots, recorder):
    async with slots(1, FairShare(reserved=1)) as jobs:
        jobs.register(recorder.task())
        holder = recorder.job("holder", hold=True, priority=Priority.BULK)
        await jobs.defer([holder])
        await recorder.wait(recorder.started, "holder")
        await jobs.defer([recorder.job("bulk", hold=True, priority=Priority.BULK)])
        urgent = recorder.job("urgent", hold=True, priority=Priority.INTERACTIVE)
        await jobs.defer([urgent])
        # The regular slot is the holder's: the reserved one takes urgent work
        # at once, never the waiting line.
        await recorder.wait(recorder.started, "urgent")
        await jobs.defer(
            [recorder.job("urgent-2", hold=True, priority=Priority.INTERACTIVE)]
        )
        recorder.free("urgent")
        await recorder.wait(recorder.started, "urgent-2")
        started_while_held = recorder.started_keys()
        for key in ("holder", "urgent-2", "bulk"):
            recorder.free(key)
        await recorder.wait(recorder.finished, "bulk")

    assert started_while_held == ["holder", "urgent", "urgent-2"]
    assert recorder.started_keys()[-1] == "bulk"


async def test_a_running_job_is_outranked_by_a_tenant_with_fewer_slots_only(
    slots, recorder
):
    async with slots(3, FairShare()) as jobs:
        jobs.register(recorder.task())
        for key in ("a-1", "a-2", "b-1"):
            tenant = key.split("-")[0]
            await jobs.defer([recorder.job(key, hold=True, priority=0, tenant=tenant)])
            await recorder.wait(recorder.started, key)
        await jobs.defer([recorder.job("c-1", priority=Priority.BULK, tenant="c")])
        await jobs.defer([recorder.job("a-3", priority=Priority.BULK, tenant="a")])
        # a runs two, b one, c none: a's job offers its slot to c; b's, one
        # slot from a's share, offers it to nobody (no trading back and forth).
        a_offers = await jobs.outranked(Priority.BULK, "a")
        b_offers = await jobs.outranked(Priority.BULK, "b")
        for key in ("a-1", "a-2", "b-1"):
            recorder.free(key)
        await recorder.wait(recorder.finished, "a-3")
        await recorder.wait(recorder.finished, "c-1")

    assert a_offers is True
    assert b_offers is False
