"""``ResponseFollower``: a running Response's stored events, as they come.

A follower reads the events after its position together with the Response's
status (one statement, one snapshot: a terminal status means every event of
the run has been read), then waits for the notification sent with each
stored event and snapshot (``notify.py``), or ``poll_interval`` seconds in
case one was missed. A read that meets a database outage keeps the stream
open (the SSE pings go on) and is tried again every
``FOLLOW_RETRY_SECONDS``, for up to ``follow_patience`` seconds of outage;
the run it follows is handed back and run again meanwhile, so the follower
sees it through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from typing import Any

from langgraph_openai_serve.backends.postgres.notify import ResponseListener, Wake
from langgraph_openai_serve.backends.postgres.response_rows import FOLLOW
from langgraph_openai_serve.operations.outages import database_fault
from langgraph_openai_serve.responses.protocol import TERMINAL_STATUSES, StoredEvent

logger = logging.getLogger("langgraph_openai_serve")

FOLLOW_RETRY_SECONDS = 1.0
"""How often a follower reads again while the database is away."""


class ResponseFollower:
    """Follows stored Responses on ``connection``'s pool; ``listener`` wakes
    it. The store owns one and reads its settings at each read."""

    def __init__(
        self,
        connection: Callable[[], Awaitable[Any]],
        listener: ResponseListener,
        *,
        poll_interval: float,
        follow_patience: float,
    ) -> None:
        self._connection = connection
        self._listener = listener
        self.poll_interval = poll_interval
        self.follow_patience = follow_patience

    async def events(self, response_id: str, after: int) -> AsyncIterator[StoredEvent]:
        """The events of ``response_id`` after ``after``, until it ends or is
        deleted."""
        async with (
            self._listener.subscribe(response_id) as wake,
            aclosing(self._follow(response_id, after, wake)) as events,
        ):
            async for event in events:
                yield event

    async def _follow(
        self, response_id: str, after: int, wake: Wake
    ) -> AsyncGenerator[StoredEvent]:
        position = after
        while True:
            rows = await self._next_rows(response_id, position)
            if not rows:
                return  # deleted
            for row in rows:
                if row["seq"] is not None:
                    position = row["seq"]
                    yield StoredEvent(row["seq"], row["event"])
            # The end's events are stored with its terminal status.
            if rows[0]["status"] in TERMINAL_STATUSES:
                return
            await wake.wait(self.poll_interval)

    async def _next_rows(self, response_id: str, position: int) -> list[Any]:
        """The next read, waiting out an outage of up to ``follow_patience``
        seconds (the read is safe to send again)."""
        loop = asyncio.get_running_loop()
        failing_since: float | None = None
        while True:
            try:
                async with await self._connection() as conn:
                    cursor = await conn.execute(FOLLOW, (position, response_id))
                    rows: list[Any] = await cursor.fetchall()
                    return rows
            except Exception as error:
                if database_fault(error) is None:
                    raise
                if failing_since is None:
                    failing_since = loop.time()
                    logger.warning(
                        "background.follower_waits_for_database response=%s: %s",
                        response_id,
                        error,
                    )
                if loop.time() - failing_since >= self.follow_patience:
                    raise
            await asyncio.sleep(FOLLOW_RETRY_SECONDS)
