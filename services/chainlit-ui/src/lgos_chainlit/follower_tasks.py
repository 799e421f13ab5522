"""Tasks that follow background runs after the handler that started them.

Chainlit 2.12 disables every action button while a message (or action)
handler runs, so a background run followed inside the handler could never be
cancelled with its button. The handler therefore hands the rest of the run to
a task of the chat session and returns. ``Followers`` keeps a reference to
each such task (an unreferenced task may be garbage collected mid-run),
reports a task's unexpected error through ``report`` (there is no handler left
to show it), and cancels them all when the chat ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)


class Followers:
    """The running follower tasks of one chat session."""

    def __init__(self, report: Callable[[Exception], Awaitable[None]]) -> None:
        self.report = report
        self.tasks: set[asyncio.Task[None]] = set()

    def start(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run ``work`` in a task of its own, kept until it is done."""
        task = asyncio.create_task(self._guarded(work))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception as exc:
            logger.exception("following a background run failed")
            with contextlib.suppress(Exception):
                await self.report(exc)

    async def close(self) -> None:
        """Cancel every follower and wait for it to stop (the chat ended; the
        runs go on and are picked up when the chat is opened again)."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
