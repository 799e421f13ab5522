"""Batches past their window expire on time, whether or not a line runs.

A running chunk notices the end of the window itself (``steps``), but a
batch whose chunks all wait in the queue behind other work, or whose
workers are all gone, has no chunk to notice it. So every ``lgos serve`` and
``lgos worker`` process looks for open batches past their window every
``LGOS_BATCH_EXPIRY_CHECK_INTERVAL`` seconds and moves them to
``finalizing``; the finalize step, run by the next free worker, settles
their unrun lines as ``batch_expired`` and writes the files. The move is
conditional on the status it leaves, so processes sweeping at once are
harmless: one of them moves each batch.
"""

from __future__ import annotations

import asyncio
import logging
import time

from langgraph_openai_serve.batches.finalize import finalize_as
from langgraph_openai_serve.batches.protocol import OPEN_STATUSES
from langgraph_openai_serve.batches.runtime import BatchRuntime

logger = logging.getLogger("langgraph_openai_serve")

_OPEN = frozenset(OPEN_STATUSES)


async def expire_overdue(runtime: BatchRuntime) -> list[str]:
    """Move every open batch past its window to ``finalizing`` (expired);
    the ids this call moved."""
    moved: list[str] = []
    overdue = await runtime.store.overdue(time.time())
    if not overdue:
        return moved
    for batch_id in overdue:
        # The sweep knows ids only: the finalize step counts as the
        # deployment's own work.
        if await finalize_as(runtime, batch_id, None, "expired", before=_OPEN):
            logger.info("batch.expired batch=%s", batch_id)
            moved.append(batch_id)
    return moved


async def expire_forever(runtime: BatchRuntime) -> None:
    """``expire_overdue`` every ``expiry_check_interval`` seconds until
    cancelled; a failed sweep is logged and the next one tries again."""
    while True:
        await asyncio.sleep(runtime.expiry_check_interval)
        try:
            await expire_overdue(runtime)
        except Exception:
            logger.exception("batch.expiry_sweep_failed")
