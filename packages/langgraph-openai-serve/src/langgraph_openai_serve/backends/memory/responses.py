"""``InMemoryResponseStore``: Responses in this process's memory.

The embedded default: it suits tests and a single development server. It
keeps background Responses while they run and, with
``LGOS_RESPONSE_STORE=memory``, finished foreground ones.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph_openai_serve.graph.errors import RunBusyError
from langgraph_openai_serve.operations.admission import LimitReached
from langgraph_openai_serve.responses.errors import IdempotencyKeyReusedError
from langgraph_openai_serve.responses.protocol import (
    TERMINAL_STATUSES,
    Attempt,
    BackgroundJob,
    Enqueue,
    StoredEvent,
    StoredTurn,
)

logger = logging.getLogger("langgraph_openai_serve")


@dataclass
class _Record:
    scope: str
    snapshot: dict[str, Any]
    job: BackgroundJob | None
    """``None``: a kept foreground Response."""
    input_items: list[dict[str, Any]]
    stored_at: float
    """Wall-clock time it was stored (retention)."""
    events: list[StoredEvent] = field(default_factory=list)
    cancel: bool = False
    started: int = 0
    handed_back: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class InMemoryResponseStore:
    """A ``ResponseStore`` in this process's memory."""

    def __init__(
        self,
        *,
        idempotency_ttl: float = 24 * 3600,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._records: dict[str, _Record] = {}
        self._keys: dict[tuple[str, str], tuple[str, str | None, float]] = {}
        self._runs: dict[tuple[str, str], str] = {}
        """The last Response submitted for each (scope, interrupt run): the
        run's live one, if that one has not finished."""
        self.idempotency_ttl = idempotency_ttl
        self._clock = clock
        self._wall_clock = wall_clock

    async def create(
        self,
        job: BackgroundJob,
        snapshot: dict[str, Any],
        *,
        idempotency_key: str | None = None,
        body_digest: str | None = None,
        enqueue: Enqueue | None = None,
        input_items: list[dict[str, Any]] | None = None,
        most_unfinished: int | None = None,
    ) -> tuple[dict[str, Any], bool]:
        now = self._clock()
        if idempotency_key is not None:
            known = self._keys.get((job.scope, idempotency_key))
            if known is not None and now - known[2] < self.idempotency_ttl:
                response_id, digest, _ = known
                if digest != body_digest:
                    raise IdempotencyKeyReusedError(idempotency_key)
                return self._records[response_id].snapshot, False
        if job.run_id is not None and await self.drives(job.scope, job.run_id):
            raise RunBusyError(job.run_id)
        if (
            most_unfinished is not None
            and self._unfinished(job.scope) >= most_unfinished
        ):
            raise LimitReached("tenant_background", most_unfinished)
        # Stored before the queue is awaited, so a concurrent create of the
        # same run or key finds it; taken back if queueing fails.
        key = (job.scope, idempotency_key) if idempotency_key is not None else None
        if key is not None:
            self._keys[key] = (job.response_id, body_digest, now)
        self._records[job.response_id] = _Record(
            job.scope, snapshot, job, input_items or [], self._wall_clock()
        )
        if job.run_id is not None:
            self._runs[(job.scope, job.run_id)] = job.response_id
        if enqueue is not None:
            try:
                await enqueue(None)
            except BaseException:
                self._forget(job.response_id)
                raise
        return snapshot, True

    def _unfinished(self, scope: str) -> int:
        return sum(
            1
            for record in self._records.values()
            if record.scope == scope
            and record.job is not None
            and record.snapshot.get("status") not in TERMINAL_STATUSES
        )

    async def drives(self, scope: str, run_id: str) -> bool:
        record = self._records.get(self._runs.get((scope, run_id), ""))
        return (
            record is not None
            and record.scope == scope
            and record.snapshot.get("status") not in TERMINAL_STATUSES
        )

    async def get(self, response_id: str, scope: str) -> dict[str, Any] | None:
        record = self._records.get(response_id)
        if record is None or record.scope != scope:
            return None
        return record.snapshot

    async def job(self, response_id: str) -> BackgroundJob | None:
        record = self._records.get(response_id)
        return record.job if record else None

    def unfinished(self, response_id: str) -> bool:
        """Whether the Response is kept and still queued or running (its
        Conversation turn holds the Conversation until then)."""
        record = self._records.get(response_id)
        return (
            record is not None
            and record.snapshot.get("status") not in TERMINAL_STATUSES
        )

    def _notify(self, record: _Record) -> None:
        record.changed.set()
        record.changed = asyncio.Event()

    async def set_snapshot(
        self,
        response_id: str,
        snapshot: dict[str, Any],
        *,
        enqueue: Enqueue | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> bool:
        record = self._records[response_id]
        if record.snapshot.get("status") in TERMINAL_STATUSES:
            return False
        start = len(record.events)
        record.events.extend(
            StoredEvent(start + offset, event)
            for offset, event in enumerate(events or ())
        )
        record.snapshot = snapshot
        self._notify(record)
        if enqueue is not None:
            await enqueue(None)
        return True

    async def start_attempt(self, response_id: str) -> Attempt:
        record = self._records.get(response_id)
        if record is None:
            return Attempt(None, False, lost=0, last_sequence=-1)
        lost = record.started - record.handed_back
        ended = record.snapshot.get("status") in TERMINAL_STATUSES
        counted = not ended and not record.cancel
        first = counted and record.started == 0
        waited = time.time() - record.stored_at if first else None
        if counted:
            record.started += 1
        return Attempt(
            record.snapshot,
            record.cancel,
            lost=lost,
            last_sequence=len(record.events) - 1,
            waited=waited,
            job=record.job,
        )

    async def hand_back(self, response_id: str) -> None:
        record = self._records[response_id]
        record.handed_back += 1
        if record.snapshot.get("status") not in TERMINAL_STATUSES:
            record.snapshot = {**record.snapshot, "status": "queued"}
            self._notify(record)

    async def append_events(
        self, response_id: str, events: list[dict[str, Any]]
    ) -> None:
        record = self._records[response_id]
        start = len(record.events)
        record.events.extend(
            StoredEvent(start + offset, event) for offset, event in enumerate(events)
        )
        self._notify(record)

    async def events(self, response_id: str, after: int) -> AsyncIterator[StoredEvent]:
        record = self._records[response_id]
        position = after + 1
        while True:
            changed = record.changed
            while position < len(record.events):
                yield record.events[position]
                position += 1
            if record.snapshot.get("status") in TERMINAL_STATUSES:
                return
            await changed.wait()

    async def request_cancel(self, response_id: str) -> bool:
        record = self._records[response_id]
        if record.snapshot.get("status") in TERMINAL_STATUSES:
            return False
        record.cancel = True
        return True

    async def cancel_requested(self, response_id: str) -> bool:
        return self._records[response_id].cancel

    async def save(
        self, scope: str, response: dict[str, Any], input_items: list[dict[str, Any]]
    ) -> None:
        self._records[response["id"]] = _Record(
            scope, response, None, input_items, self._wall_clock()
        )

    async def input_items(
        self, response_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        record = self._records.get(response_id)
        if record is None or record.scope != scope:
            return None
        return record.input_items

    async def chain(self, response_id: str, scope: str) -> list[StoredTurn] | None:
        turns: list[StoredTurn] = []
        current: str | None = response_id
        while current is not None:
            record = self._records.get(current)
            if record is None or record.scope != scope:
                break
            turns.append(StoredTurn(record.snapshot, record.input_items))
            current = record.snapshot.get("previous_response_id")
        if not turns:
            return None
        turns.reverse()
        return turns

    async def output_items(
        self, item_ids: Sequence[str], scope: str
    ) -> dict[str, dict[str, Any]]:
        wanted = set(item_ids)
        found: dict[str, dict[str, Any]] = {}
        for record in self._records.values():
            if record.scope == scope:
                for item in record.snapshot.get("output", ()):
                    if item.get("id") in wanted:
                        found[item["id"]] = item
        return found

    async def delete(self, response_id: str, scope: str) -> bool:
        record = self._records.get(response_id)
        if record is None or record.scope != scope:
            return False
        self._forget(response_id)
        return True

    async def delete_expired(self, before: dt.datetime) -> int:
        cutoff = before.timestamp()
        expired = [
            response_id
            for response_id, record in self._records.items()
            if record.stored_at < cutoff
            and record.snapshot.get("status") in TERMINAL_STATUSES
        ]
        for response_id in expired:
            self._forget(response_id)
        return len(expired)

    def _forget(self, response_id: str) -> None:
        record = self._records.pop(response_id)
        for key, known in list(self._keys.items()):
            if known[0] == response_id:
                del self._keys[key]
        job = record.job
        if job is not None and job.run_id is not None:
            run = (record.scope, job.run_id)
            if self._runs.get(run) == response_id:
                del self._runs[run]
