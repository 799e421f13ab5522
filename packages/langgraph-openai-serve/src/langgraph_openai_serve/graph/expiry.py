"""Expiry of abandoned interrupt runs.

A paused interrupt run keeps its checkpoint thread until the client resumes
it. Clients may never come back, so operators schedule
``delete_expired_interrupt_runs`` with a TTL longer than the longest time they
allow between a pause and its resume.

The sweep uses only the checkpointer's public asynchronous API (``alist``,
``adelete_thread``), so it works with any asynchronous saver. That API cannot
list threads alone: the sweep reads every checkpoint in the saver, LGOS's and
any other's. LGOS threads hold few checkpoints (exit durability writes one per
pause), but a saver shared with large unrelated histories makes the sweep
proportionally slower; give interrupt runs their own saver or database then.
"""

from __future__ import annotations

import datetime
import logging
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.graph.checkpoint_keys import is_checkpoint_key
from langgraph_openai_serve.graph.coordination import RunCoordinator
from langgraph_openai_serve.graph.errors import RunBusyError

logger = logging.getLogger(__name__)


async def delete_expired_interrupt_runs(
    checkpointer: BaseCheckpointSaver[Any],
    *,
    older_than: datetime.timedelta,
    now: datetime.datetime | None = None,
    coordinator: RunCoordinator | None = None,
) -> int:
    """Delete LGOS interrupt runs whose latest checkpoint is older than a TTL.

    Only threads whose id is an LGOS checkpoint key are considered; a thread's
    age is that of its newest checkpoint in any namespace (``checkpoint["ts"]``).
    Threads whose timestamp cannot be read are kept.

    Args:
        checkpointer: the graphs' asynchronous checkpointer.
        older_than: the TTL; must be positive.
        now: the current time (timezone-aware); defaults to the UTC clock.
        coordinator: when given, each run is deleted while holding its lease,
            after checking its age again; runs whose lease is held (being
            resumed right now) are skipped.

    Returns:
        How many runs were deleted.
    """
    if older_than <= datetime.timedelta(0):
        raise ValueError("older_than must be a positive duration")
    if now is None:
        now = datetime.datetime.now(datetime.UTC)
    elif now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    cutoff = now - older_than

    latest = await _latest_checkpoint_times(checkpointer, None)
    expired = [tid for tid, ts in latest.items() if ts < cutoff]
    deleted = 0
    for thread_id in expired:
        if coordinator is None:
            await checkpointer.adelete_thread(thread_id)
            deleted += 1
            continue
        try:
            async with coordinator.lease(thread_id):
                again = await _latest_checkpoint_times(checkpointer, thread_id)
                newest = again.get(thread_id)
                if newest is None or newest >= cutoff:
                    continue
                await checkpointer.adelete_thread(thread_id)
                deleted += 1
        except RunBusyError:
            logger.info("interrupt run %s is busy; not expiring it now", thread_id)
    return deleted


async def _latest_checkpoint_times(
    checkpointer: BaseCheckpointSaver[Any], thread_id: str | None
) -> dict[str, datetime.datetime]:
    """The newest checkpoint time of each LGOS thread (or of one thread)."""
    config: Any = None
    if thread_id is not None:
        config = {"configurable": {"thread_id": thread_id}}
    latest: dict[str, datetime.datetime] = {}
    unreadable: set[str] = set()
    async for item in checkpointer.alist(config):
        tid = item.config["configurable"]["thread_id"]
        if not isinstance(tid, str) or not is_checkpoint_key(tid):
            continue
        ts = _parse_ts(item.checkpoint.get("ts"))
        if ts is None:
            unreadable.add(tid)
        elif tid not in latest or ts > latest[tid]:
            latest[tid] = ts
    for tid in unreadable:
        logger.warning("checkpoint thread %s has an unreadable timestamp", tid)
        latest.pop(tid, None)
    return latest


def _parse_ts(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        ts = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if ts.utcoffset() is None:
        ts = ts.replace(tzinfo=datetime.UTC)
    return ts
