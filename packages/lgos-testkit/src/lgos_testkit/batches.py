"""Waiting for a batch to reach a status, through the SDK (``GET
/v1/batches/{id}``), with a bound generous enough for a busy machine."""

from __future__ import annotations

from collections.abc import Collection

from lgos_stack.net import async_wait_until, wait_until
from openai import AsyncOpenAI, OpenAI
from openai.types import Batch

BATCH_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
WAIT_SECONDS = 120.0


def _what(batch_id: str, statuses: Collection[str], last: Batch | None) -> str:
    seen = last.status if last is not None else "nothing yet"
    return f"{batch_id} to be {' or '.join(sorted(statuses))} (last: {seen})"


def wait_for_batch(
    client: OpenAI,
    batch_id: str,
    statuses: Collection[str] = BATCH_ENDED,
    timeout: float = WAIT_SECONDS,
) -> Batch:
    """The batch once its status is one of ``statuses``."""
    last: Batch | None = None

    def reached() -> bool:
        nonlocal last
        last = client.batches.retrieve(batch_id)
        return last.status in statuses

    try:
        wait_until(reached, timeout, batch_id, interval=0.05)
    except TimeoutError:
        raise TimeoutError(_what(batch_id, statuses, last)) from None
    assert last is not None
    return last


async def await_batch(
    client: AsyncOpenAI,
    batch_id: str,
    statuses: Collection[str] = BATCH_ENDED,
    within: float = WAIT_SECONDS,
) -> Batch:
    """``wait_for_batch`` for the async SDK client."""
    last: Batch | None = None

    async def reached() -> bool:
        nonlocal last
        last = await client.batches.retrieve(batch_id)
        return last.status in statuses

    try:
        await async_wait_until(reached, within, batch_id, interval=0.02)
    except TimeoutError:
        raise TimeoutError(_what(batch_id, statuses, last)) from None
    assert last is not None
    return last
