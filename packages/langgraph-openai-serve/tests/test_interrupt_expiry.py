"""The expiry sweep of abandoned interrupt runs, on every async checkpointer."""

from __future__ import annotations

import datetime
import uuid
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve.graph.checkpoint_keys import checkpoint_key
from langgraph_openai_serve.graph.coordination import InMemoryRunCoordinator
from langgraph_openai_serve.graph.expiry import delete_expired_interrupt_runs

pytestmark = pytest.mark.anyio

NOW = datetime.datetime(2026, 11, 1, 12, 0, tzinfo=datetime.UTC)
TTL = datetime.timedelta(hours=1)
OLD = NOW - datetime.timedelta(hours=2)
FRESH = NOW - datetime.timedelta(minutes=5)

Saver = BaseCheckpointSaver[Any]


@pytest.fixture(params=["memory", "postgres"])
def saver(request: pytest.FixtureRequest) -> Saver:
    if request.param == "memory":
        return InMemorySaver()
    saver: Saver = request.getfixturevalue("postgres_saver")
    return saver


def run_key() -> str:
    return checkpoint_key("default", "interruptible", uuid.uuid4())


async def put(
    saver: Saver, thread_id: str, ts: datetime.datetime, namespace: str = ""
) -> None:
    checkpoint = empty_checkpoint()
    checkpoint["ts"] = ts.isoformat()
    config: Any = {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace}}
    await saver.aput(config, checkpoint, {"source": "loop", "step": 0}, {})


async def threads(saver: Saver) -> set[str]:
    return {
        item.config["configurable"]["thread_id"] async for item in saver.alist(None)
    }


async def test_deletes_only_expired_lgos_threads(saver: Saver) -> None:
    expired, fresh = run_key(), run_key()
    await put(saver, expired, OLD - datetime.timedelta(minutes=1))
    await put(saver, expired, OLD)
    await put(saver, fresh, FRESH)
    unrelated = ["chat-123", "lgos-not-a-key", run_key().upper()]
    for thread_id in unrelated:
        await put(saver, thread_id, OLD)

    deleted = await delete_expired_interrupt_runs(saver, older_than=TTL, now=NOW)

    assert deleted == 1
    assert await threads(saver) == {fresh, *unrelated}


async def test_a_thread_is_as_old_as_its_newest_checkpoint(saver: Saver) -> None:
    """A newer checkpoint in a subgraph namespace keeps the whole run alive."""
    key = run_key()
    await put(saver, key, OLD)
    await put(saver, key, FRESH, namespace="child:1")

    assert await delete_expired_interrupt_runs(saver, older_than=TTL, now=NOW) == 0
    assert await threads(saver) == {key}

    later = NOW + datetime.timedelta(hours=2)
    assert await delete_expired_interrupt_runs(saver, older_than=TTL, now=later) == 1
    assert await threads(saver) == set()


async def test_the_ttl_boundary_keeps_a_run_exactly_at_the_ttl(saver: Saver) -> None:
    key = run_key()
    await put(saver, key, NOW - TTL)
    assert await delete_expired_interrupt_runs(saver, older_than=TTL, now=NOW) == 0
    tick = NOW + datetime.timedelta(microseconds=1)
    assert await delete_expired_interrupt_runs(saver, older_than=TTL, now=tick) == 1


class State(TypedDict):
    answer: str


def ask(state: State) -> State:
    return {"answer": interrupt({"question": "Approve?"})}


async def test_deletes_a_paused_graph_run_with_its_pending_writes(saver: Saver) -> None:
    graph = StateGraph(State).add_node(ask).add_edge(START, "ask").compile(saver)
    key = run_key()
    config: Any = {"configurable": {"thread_id": key}}
    result = await graph.ainvoke({"answer": ""}, config, durability="exit")
    assert "__interrupt__" in result
    snapshot = await saver.aget_tuple(config)
    assert snapshot is not None
    assert snapshot.pending_writes

    now = datetime.datetime.now(datetime.UTC) + 2 * TTL
    assert await delete_expired_interrupt_runs(saver, older_than=TTL, now=now) == 1

    assert await saver.aget_tuple(config) is None
    assert await threads(saver) == set()


async def test_a_run_holding_its_lease_is_skipped(saver: Saver) -> None:
    coordinator = InMemoryRunCoordinator()
    busy, idle = run_key(), run_key()
    await put(saver, busy, OLD)
    await put(saver, idle, OLD)

    async with coordinator.lease(busy):
        deleted = await delete_expired_interrupt_runs(
            saver, older_than=TTL, now=NOW, coordinator=coordinator
        )
    assert deleted == 1
    assert await threads(saver) == {busy}

    async with coordinator.lease(busy), coordinator.lease(idle):
        pass  # the sweep left no lease behind
    assert (
        await delete_expired_interrupt_runs(
            saver, older_than=TTL, now=NOW, coordinator=coordinator
        )
        == 1
    )
    assert await threads(saver) == set()


async def test_arguments_are_checked() -> None:
    saver = InMemorySaver()
    with pytest.raises(ValueError, match="positive"):
        await delete_expired_interrupt_runs(saver, older_than=datetime.timedelta(0))
    with pytest.raises(ValueError, match="timezone-aware"):
        await delete_expired_interrupt_runs(
            saver, older_than=TTL, now=datetime.datetime(2026, 1, 1)
        )


async def test_nothing_to_delete_in_an_empty_saver(saver: Saver) -> None:
    assert await delete_expired_interrupt_runs(saver, older_than=TTL) == 0
