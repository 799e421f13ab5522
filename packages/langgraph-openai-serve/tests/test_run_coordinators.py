"""Run coordinators: one conformance suite for every backend (each backend's
``run_coordinator()``), then the PostgreSQL coordinator's own guarantees, on
a real server."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator

import anyio
import psycopg
import pytest
from langgraph_openai_serve.graph.coordination import (
    RunCoordinator,
)
from langgraph_openai_serve.graph.errors import (
    GraphConfigurationError,
    LGOSError,
    RunBusyError,
)
from langgraph_openai_serve.integrations.postgres import (
    PostgresRunCoordinator,
    advisory_lock_id,
)
from postgres_fixtures import POOL_KWARGS, Pool, PoolFactory
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

pytestmark = pytest.mark.anyio

# Every wait in this module is for something that happens promptly; a
# coordinator that queued a busy key would deadlock instead, so fail fast.
PROMPT = 5.0


class Boom(Exception):
    pass


def new_key() -> str:
    return f"lgos-test-{uuid.uuid4().hex}"


@pytest.fixture
def coordinator(backend) -> RunCoordinator:
    """The run coordinator of each backend (``backend_fixtures.py``)."""
    return backend.run_coordinator(max_concurrent_leases=3)


# --- conformance: every coordinator ---------------------------------------


async def test_coordinator_satisfies_the_protocol(
    coordinator: RunCoordinator,
) -> None:
    assert isinstance(coordinator, RunCoordinator)


async def test_lease_is_released_when_the_block_ends(
    coordinator: RunCoordinator,
) -> None:
    key = new_key()
    with anyio.fail_after(PROMPT):
        for _ in range(10):  # more times than the pool has connections
            async with coordinator.lease(key):
                pass


async def test_second_lease_on_a_held_key_fails_at_once(
    coordinator: RunCoordinator,
) -> None:
    key = new_key()
    # The holder leaves only after the contender has finished: a contender
    # that waited for the key would deadlock and trip fail_after.
    with anyio.fail_after(PROMPT):
        async with coordinator.lease(key):
            with pytest.raises(RunBusyError) as caught:
                async with coordinator.lease(key):
                    pytest.fail("a held key was leased twice")
    assert caught.value.key == key
    assert isinstance(caught.value, LGOSError)


async def test_different_keys_are_independent(coordinator: RunCoordinator) -> None:
    first, second = new_key(), new_key()
    with anyio.fail_after(PROMPT):
        async with coordinator.lease(first), coordinator.lease(second):
            with pytest.raises(RunBusyError):
                async with coordinator.lease(first):
                    pass
        async with coordinator.lease(second):
            pass


async def test_lease_is_released_when_the_block_raises(
    coordinator: RunCoordinator,
) -> None:
    key = new_key()
    with anyio.fail_after(PROMPT):
        with pytest.raises(Boom):
            async with coordinator.lease(key):
                raise Boom
        async with coordinator.lease(key):
            pass


async def test_lease_is_released_when_the_holder_is_cancelled(
    coordinator: RunCoordinator,
) -> None:
    """Cancel the holding task the way the SSE layer does (``Task.cancel``)."""
    key = new_key()
    entered = asyncio.Event()

    async def hold() -> None:
        async with coordinator.lease(key):
            entered.set()
            await asyncio.Event().wait()

    with anyio.fail_after(PROMPT):
        holder = asyncio.create_task(hold())
        await entered.wait()
        with pytest.raises(RunBusyError):
            async with coordinator.lease(key):
                pass
        holder.cancel()
        with pytest.raises(asyncio.CancelledError):
            await holder
        async with coordinator.lease(key):
            pass


async def test_a_failed_lease_does_not_disturb_the_holder(
    coordinator: RunCoordinator,
) -> None:
    key = new_key()
    with anyio.fail_after(PROMPT):
        async with coordinator.lease(key):
            for _ in range(5):  # more times than the pool has connections
                with pytest.raises(RunBusyError):
                    async with coordinator.lease(key):
                        pass
        async with coordinator.lease(key):
            pass


# --- PostgreSQL -------------------------------------------------------------


@pytest.fixture
async def observer(postgres_uri: str) -> AsyncIterator[psycopg.AsyncConnection[dict]]:
    """A separate session that inspects locks, like another process would."""
    conn = await psycopg.AsyncConnection.connect(
        postgres_uri, autocommit=True, row_factory=dict_row
    )
    yield conn
    await conn.close()


async def holders(observer: psycopg.AsyncConnection[dict], key: str) -> list[int]:
    """Backend pids holding the lease lock of ``key`` (from ``pg_locks``)."""
    unsigned = advisory_lock_id(key) & 0xFFFF_FFFF_FFFF_FFFF
    cursor = await observer.execute(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND classid = %s::oid AND objid = %s::oid AND objsubid = 1",
        (unsigned >> 32, unsigned & 0xFFFF_FFFF),
    )
    return [row["pid"] for row in await cursor.fetchall()]


async def lock_is_free(observer: psycopg.AsyncConnection[dict], key: str) -> bool:
    """Take and drop the lease lock from another session, waiting up to 5 s:
    a closed session's locks go when its server process has exited."""
    await observer.execute("SET lock_timeout = '5s'")
    try:
        await observer.execute("SELECT pg_advisory_lock(%s)", (advisory_lock_id(key),))
    except psycopg.errors.LockNotAvailable:
        return False
    finally:
        await observer.execute("RESET lock_timeout")
    await observer.execute("SELECT pg_advisory_unlock(%s)", (advisory_lock_id(key),))
    return True


async def test_a_lease_holds_a_session_advisory_lock(
    postgres_pool: Pool, observer: psycopg.AsyncConnection[dict]
) -> None:
    coordinator = PostgresRunCoordinator(postgres_pool, max_concurrent_leases=2)
    key = new_key()
    async with coordinator.lease(key):
        assert len(await holders(observer, key)) == 1
        busy = await observer.execute(
            "SELECT pg_try_advisory_lock(%s) AS locked", (advisory_lock_id(key),)
        )
        assert (await busy.fetchone()) == {"locked": False}
    assert await holders(observer, key) == []
    assert postgres_pool.get_stats().get("returns_bad", 0) == 0


async def test_two_pools_contend_like_two_processes(
    postgres_pool_factory: PoolFactory,
) -> None:
    first = PostgresRunCoordinator(
        await postgres_pool_factory(max_size=2), max_concurrent_leases=1
    )
    second = PostgresRunCoordinator(
        await postgres_pool_factory(max_size=2), max_concurrent_leases=1
    )
    key = new_key()
    with anyio.fail_after(PROMPT):
        async with first.lease(key):
            with pytest.raises(RunBusyError):
                async with second.lease(key):
                    pass
        async with second.lease(key):
            with pytest.raises(RunBusyError):
                async with first.lease(key):
                    pass
        async with first.lease(key):
            pass


async def test_extra_lease_waits_for_a_free_slot(
    postgres_pool_factory: PoolFactory, observer: psycopg.AsyncConnection[dict]
) -> None:
    """Beyond ``max_concurrent_leases`` a lease waits (it is capacity, not
    contention on its key) while the pool keeps connections for persistence."""
    pool = await postgres_pool_factory(max_size=3)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=1)
    first, second = new_key(), new_key()
    held, release, acquired = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def hold_first() -> None:
        async with coordinator.lease(first):
            held.set()
            await release.wait()

    async def take_second() -> None:
        async with coordinator.lease(second):
            acquired.set()

    with anyio.fail_after(PROMPT):
        holder = asyncio.create_task(hold_first())
        await held.wait()
        waiter = asyncio.create_task(take_second())
        await asyncio.sleep(0)  # the waiter runs up to the full semaphore
        # Persistence I/O still gets a connection while the waiter waits.
        async with pool.connection(timeout=1) as conn:
            await conn.execute("SELECT 1")
        assert not waiter.done()
        assert await holders(observer, second) == []
        release.set()
        await holder
        await waiter
    assert acquired.is_set()


async def test_extra_lease_gives_up_after_the_pool_timeout(
    postgres_pool_factory: PoolFactory,
) -> None:
    pool = await postgres_pool_factory(max_size=2, timeout=0.2)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=1)
    with anyio.fail_after(PROMPT):
        async with coordinator.lease(new_key()):
            with pytest.raises(PoolTimeout, match="max_concurrent_leases=1"):
                async with coordinator.lease(new_key()):
                    pass
        async with coordinator.lease(new_key()):
            pass


async def test_interrupted_unlock_closes_the_session(
    postgres_pool: Pool,
    observer: psycopg.AsyncConnection[dict],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """anyio cancellation is level-triggered: a cancelled scope also cancels
    the unlock the lease runs on the way out, so whether PostgreSQL ran the
    unlock is unknown. The coordinator must end that session."""
    coordinator = PostgresRunCoordinator(postgres_pool, max_concurrent_leases=2)
    key = new_key()
    caplog.set_level(logging.WARNING, "langgraph_openai_serve.integrations.postgres")
    with anyio.fail_after(PROMPT):
        with anyio.CancelScope() as scope:
            async with coordinator.lease(key):
                [pid] = await holders(observer, key)
                scope.cancel()  # delivered at the lease's unlock
        assert scope.cancelled_caught
        assert "did not complete (CancelledError)" in caplog.text
        assert await lock_is_free(observer, key)
        gone = await observer.execute(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE pid = %s", (pid,)
        )
        assert (await gone.fetchone()) == {"n": 0}
        assert postgres_pool.get_stats()["returns_bad"] == 1
        async with coordinator.lease(key):  # the pool replaced the connection
            pass


async def test_a_lease_cancelled_while_locking_leaves_nothing_behind(
    postgres_pool_factory: PoolFactory, observer: psycopg.AsyncConnection[dict]
) -> None:
    pool = await postgres_pool_factory(max_size=2)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=2)
    key = new_key()
    with anyio.fail_after(PROMPT):
        for _ in range(3):  # more than the pool has connections
            with anyio.CancelScope() as scope:
                scope.cancel()  # lands on the first wait inside the lease
                async with coordinator.lease(key):
                    pytest.fail("a cancelled lease was entered")
            assert await lock_is_free(observer, key)
        async with coordinator.lease(key), coordinator.lease(new_key()):
            pass  # neither a slot nor a connection leaked


async def test_failed_unlock_closes_the_session_and_keeps_the_result(
    postgres_pool: Pool, observer: psycopg.AsyncConnection[dict]
) -> None:
    """The holder's server process dies mid-lease: the unlock fails, the
    connection is discarded and the block's own outcome stands."""
    coordinator = PostgresRunCoordinator(postgres_pool, max_concurrent_leases=2)
    key = new_key()

    async def run_and_lose_the_session(error: Exception | None) -> str:
        async with coordinator.lease(key):
            [pid] = await holders(observer, key)
            await observer.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
            if error is not None:
                raise error
            return "done"

    with anyio.fail_after(PROMPT):
        assert await run_and_lose_the_session(None) == "done"
        assert await lock_is_free(observer, key)
        assert postgres_pool.get_stats()["returns_bad"] == 1
        with pytest.raises(Boom):
            await run_and_lose_the_session(Boom())
        assert postgres_pool.get_stats()["returns_bad"] == 2
        async with coordinator.lease(key):
            pass


async def test_connections_without_autocommit_are_refused_at_lease(
    postgres_pool_factory: PoolFactory, observer: psycopg.AsyncConnection[dict]
) -> None:
    async def kwargs() -> dict[str, object]:
        return {**POOL_KWARGS, "autocommit": False}

    pool = await postgres_pool_factory(kwargs=kwargs)
    coordinator = PostgresRunCoordinator(pool, max_concurrent_leases=1)
    key = new_key()
    with pytest.raises(GraphConfigurationError, match="autocommit=True"):
        async with coordinator.lease(key):
            pass
    assert await lock_is_free(observer, key)


@pytest.mark.parametrize(
    ("options", "limit", "message"),
    [
        ({"close_returns": True}, 1, "close_returns=False"),
        ({"kwargs": {**POOL_KWARGS, "autocommit": False}}, 1, "autocommit"),
        ({"kwargs": {"autocommit": True}}, 1, "mapping rows"),
        ({}, 0, "positive integer"),
        ({}, True, "positive integer"),
        ({"max_size": 2}, 3, "exceeds the pool's max_size"),
    ],
    ids=[
        "close-returns",
        "no-autocommit",
        "no-row-factory",
        "zero",
        "bool",
        "above-max",
    ],
)
def test_pool_and_limit_are_checked_at_construction(
    options: dict[str, object], limit: int, message: str
) -> None:
    settings: dict[str, object] = {
        "kwargs": POOL_KWARGS,
        "min_size": 1,
        "max_size": 4,
        **options,
    }
    pool: Pool = AsyncConnectionPool("", open=False, **settings)
    with pytest.raises(GraphConfigurationError, match=message):
        PostgresRunCoordinator(pool, max_concurrent_leases=limit)


def test_only_a_psycopg_pool_is_accepted() -> None:
    with pytest.raises(GraphConfigurationError, match="AsyncConnectionPool"):
        PostgresRunCoordinator(object(), max_concurrent_leases=1)


def test_lock_ids_are_signed_64_bit_and_stable() -> None:
    ids = {advisory_lock_id(f"lgos-{n}") for n in range(1000)}
    assert len(ids) == 1000
    assert all(-(2**63) <= value < 2**63 for value in ids)
    assert advisory_lock_id("lgos-a") == advisory_lock_id("lgos-a")


def test_the_core_imports_without_psycopg() -> None:
    """Without the ``postgres`` extra the package and this module import; only
    building a coordinator fails, naming the extra."""
    script = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"psycopg", "psycopg_pool"}:
                    raise ImportError(f"blocked {name}")

        sys.meta_path.insert(0, Block())
        import langgraph_openai_serve
        import langgraph_openai_serve.graph.expiry
        from langgraph_openai_serve.graph.errors import GraphConfigurationError
        from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator

        try:
            PostgresRunCoordinator(object(), max_concurrent_leases=1)
        except GraphConfigurationError as exc:
            assert "langgraph-openai-serve[postgres]" in str(exc), exc
        else:
            raise AssertionError("no error without psycopg")
        assert not any(name.startswith("psycopg") for name in sys.modules)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
