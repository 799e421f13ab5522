"""Waiting for a (background) Response to reach a status, through the SDK.

The one status poll of the suites: every test that waits for a background
run polls ``GET /v1/responses/{id}`` through these, with a bound generous
enough for a busy machine (the bound only matters when something is broken).
"""

from __future__ import annotations

from collections.abc import Collection

from lgos_stack.net import async_wait_until, wait_until
from openai import AsyncOpenAI, OpenAI
from openai.types.responses import Response

SETTLED = frozenset({"completed", "incomplete", "failed", "cancelled"})
"""Statuses a run does not leave (a paused run is ``completed``)."""
WAIT_SECONDS = 60.0


def _what(response_id: str, statuses: Collection[str], last: Response | None) -> str:
    seen = last.status if last is not None else "nothing yet"
    return f"{response_id} to be {' or '.join(sorted(statuses))} (last: {seen})"


def wait_for_response(
    client: OpenAI,
    response_id: str,
    statuses: Collection[str] = SETTLED,
    timeout: float = WAIT_SECONDS,
) -> Response:
    """The Response once its status is one of ``statuses``."""
    last: Response | None = None

    def reached() -> bool:
        nonlocal last
        last = client.responses.retrieve(response_id)
        return last.status in statuses

    try:
        wait_until(reached, timeout, response_id, interval=0.05)
    except TimeoutError as exc:
        raise TimeoutError(_what(response_id, statuses, last)) from exc
    assert last is not None
    return last


async def await_response(
    client: AsyncOpenAI,
    response_id: str,
    statuses: Collection[str] = SETTLED,
    within: float = WAIT_SECONDS,
) -> Response:
    """``wait_for_response`` for the async SDK client."""
    last: Response | None = None

    async def reached() -> bool:
        nonlocal last
        last = await client.responses.retrieve(response_id)
        return last.status in statuses

    try:
        await async_wait_until(reached, within, response_id, interval=0.02)
    except TimeoutError as exc:
        raise TimeoutError(_what(response_id, statuses, last)) from exc
    assert last is not None
    return last
