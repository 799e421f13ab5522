"""Waiting for a background Response to reach a status, through the SDK.

One bounded poll for every suite (sync and async clients alike): it returns
the Response once its status is one of ``statuses`` and fails with
``TimeoutError``, naming the last status seen, after ``seconds`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from typing import Any

from lgos_stack.net import wait_until
from openai import AsyncOpenAI, OpenAI
from openai.types.responses import Response

SETTLED = frozenset({"completed", "failed", "cancelled", "incomplete"})
"""Every status a run ends in (a paused run is ``completed``)."""


def wait_for_status(
    client: OpenAI,
    response_id: str,
    statuses: Collection[str] = SETTLED,
    *,
    seconds: float = 30,
    interval: float = 0.1,
    **retrieve: Any,
) -> Response:
    """``client.responses.retrieve(response_id, **retrieve)`` until its status
    is one of ``statuses``."""
    seen: list[Response] = []

    def reached() -> bool:
        response: Response = client.responses.retrieve(response_id, **retrieve)
        seen.append(response)
        return seen[-1].status in statuses

    try:
        wait_until(
            reached, seconds, f"{response_id} to be {sorted(statuses)}", interval
        )
    except TimeoutError as error:
        raise TimeoutError(f"{error}; it stayed {seen[-1].status}") from None
    return seen[-1]


async def await_status(
    client: AsyncOpenAI,
    response_id: str,
    statuses: Collection[str] = SETTLED,
    *,
    seconds: float = 30,
    interval: float = 0.01,
    **retrieve: Any,
) -> Response:
    """``wait_for_status`` for an async client (the app may run in this very
    event loop, so the wait yields to it)."""
    deadline = time.monotonic() + seconds
    while True:
        response: Response = await client.responses.retrieve(response_id, **retrieve)
        if response.status in statuses:
            return response
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"timed out after {seconds:g} s waiting for {response_id} to be "
                f"{sorted(statuses)}; it stayed {response.status}"
            )
        await asyncio.sleep(interval)
