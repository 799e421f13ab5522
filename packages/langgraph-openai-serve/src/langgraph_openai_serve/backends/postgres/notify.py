"""Wake followers of background Responses when their events are stored.

Writers send a notification on ``CHANNEL`` with the Response id as payload in
the transaction that stores events or a new snapshot; PostgreSQL delivers it
at commit, so a follower never wakes before the rows are visible. Each
process keeps one ``ResponseListener``: a dedicated connection (never a pool
slot, since it stays checked out for good) that LISTENs and wakes the
followers waiting on that Response id.

A notification can be missed: the listener's connection drops (it then
reconnects with a growing delay, and wakes every follower once it listens
again, since what was sent meanwhile is gone), or a transaction-mode pooler
between us and PostgreSQL does not carry LISTEN at all. Followers therefore
also re-read at a slow interval: a missed notification delays them, it never
strands them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from langgraph_openai_serve.observability.database import count_reconnects

logger = logging.getLogger("langgraph_openai_serve")

CHANNEL = "lgos_background_events"
NOTIFY = f"pg_notify('{CHANNEL}', %s)"
"""A SQL expression that notifies the followers of the Response id bound to it;
writers put it in a statement of their transaction."""
APPLICATION_NAME = "lgos-background-listener"
"""How the listener's connection shows in ``pg_stat_activity``."""


class Wake:
    """One follower's subscription: set when its Response has news."""

    def __init__(self) -> None:
        self._news = asyncio.Event()

    def set(self) -> None:
        self._news.set()

    async def wait(self, at_most: float) -> bool:
        """Until there is news (``True``) or ``at_most`` seconds pass (``False``).

        The news is consumed before returning, so news that arrives while the
        follower reads again is kept for its next wait.
        """
        try:
            await asyncio.wait_for(self._news.wait(), at_most)
        except TimeoutError:
            return False
        self._news.clear()
        return True


class ResponseListener:
    """LISTENs on ``CHANNEL`` on its own connection, from the first
    subscription until ``close()``, and fans notifications out by Response id."""

    def __init__(
        self,
        conninfo: str,
        *,
        reconnect_delay: float = 0.1,
        max_reconnect_delay: float = 5.0,
        check_interval: float = 30.0,
    ) -> None:
        self._conninfo = conninfo
        self._reconnect_delay = reconnect_delay
        self._max_reconnect_delay = max_reconnect_delay
        self._check_interval = check_interval
        self._followers: dict[str, set[Wake]] = {}
        self._task: asyncio.Task[None] | None = None
        self.backend_pid: int | None = None
        """The listening connection's server process, while it listens."""

    @contextlib.asynccontextmanager
    async def subscribe(self, response_id: str) -> AsyncIterator[Wake]:
        """Subscribe before the first read: then no later event goes unnoticed."""
        wake = Wake()
        self._followers.setdefault(response_id, set()).add(wake)
        self.start()
        try:
            yield wake
        finally:
            followers = self._followers.get(response_id)
            if followers is not None:
                followers.discard(wake)
                if not followers:
                    del self._followers[response_id]

    def followers(self, response_id: str) -> int:
        """How many followers wait on ``response_id``'s news now."""
        return len(self._followers.get(response_id, ()))

    def start(self) -> None:
        """Start listening now (the first subscription does it otherwise)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._listen(), name=APPLICATION_NAME)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _wake(self, response_id: str) -> None:
        for wake in self._followers.get(response_id, ()):
            wake.set()

    def _wake_all(self) -> None:
        for followers in self._followers.values():
            for wake in followers:
                wake.set()

    async def _listen(self) -> None:
        import psycopg

        delay = self._reconnect_delay
        lost = False
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True, application_name=APPLICATION_NAME
                )
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    self.backend_pid = conn.info.backend_pid
                    delay = self._reconnect_delay
                    if lost:
                        count_reconnects("listener")
                        lost = False
                    # What was sent before this LISTEN reached nobody.
                    self._wake_all()
                    await self._deliver(conn)
            except (psycopg.Error, OSError, TimeoutError) as error:
                lost = True
                logger.warning(
                    "background.listener_lost retry_in=%.1fs error=%s", delay, error
                )
            finally:
                self.backend_pid = None
            await asyncio.sleep(delay)
            delay = min(delay * 2, self._max_reconnect_delay)

    async def _deliver(self, conn: Any) -> None:
        """Wake followers until the connection fails; a quiet connection is
        checked now and then, so a silently dead one is noticed."""
        while True:
            async for notification in conn.notifies(timeout=self._check_interval):
                self._wake(notification.payload)
            await asyncio.wait_for(conn.execute("SELECT 1"), self._check_interval)
