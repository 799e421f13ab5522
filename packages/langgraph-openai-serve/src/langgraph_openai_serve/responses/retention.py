"""Retention of kept Responses: delete those older than the setting.

Each API process sweeps its store every hour (``sweep_forever``, started in
the server's lifespan; on PostgreSQL the sweeps of several processes simply
find less to do) and ``lgos responses-cleanup`` sweeps on demand. A sweep
deletes finished Responses only, with their items and events: a background
run still queued or in progress is never cut short.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from langgraph_openai_serve.responses.protocol import ResponseStore

logger = logging.getLogger("langgraph_openai_serve")

SWEEP_INTERVAL = 3600.0
"""Seconds between two sweeps of a server."""


async def delete_expired(
    store: ResponseStore, retention: dt.timedelta, now: dt.datetime | None = None
) -> int:
    """Delete the finished Responses kept longer than ``retention``."""
    moment = now or dt.datetime.now(dt.UTC)
    deleted = await store.delete_expired(moment - retention)
    if deleted:
        logger.info("responses.expired deleted=%d", deleted)
    return deleted


async def sweep_forever(
    store: ResponseStore,
    retention: dt.timedelta,
    interval: float = SWEEP_INTERVAL,
) -> None:
    """Sweep now and every ``interval`` seconds until cancelled; a failed
    sweep is logged and tried again at the next one."""
    while True:
        try:
            await delete_expired(store, retention)
        except Exception:
            logger.exception("responses.sweep_failed")
        await asyncio.sleep(interval)
