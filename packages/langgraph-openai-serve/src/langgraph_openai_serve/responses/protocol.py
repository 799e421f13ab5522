"""The contract of kept and background Responses: the ``ResponseStore``.

A ``ResponseStore`` keeps Responses, each in its scope (the tenant). A
background Response lives there while it runs: its current snapshot (the
OpenAI Response object), the ordered stream events its run produced (so any
API process can replay them from a sequence number), a cancel flag and its
idempotency key. With ``LGOS_RESPONSE_STORE`` on, the same store also keeps
finished foreground Responses (``save``) with the input items each request
carried, so any kept Response can be retrieved, deleted, listed
(``input_items``) and continued (``chain``). Their runs are jobs of the
deployment's job queue (``jobs/``); the store counts their attempts.

A run is never lost: a job a stopping worker cannot finish is handed back to
the queue, and a job whose worker died is run again (``start_attempt`` counts
those losses, so a run that keeps killing its workers is failed, not retried
forever). A graph that raises is not retried: its Response fails.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

TERMINAL_STATUSES = frozenset({"completed", "incomplete", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class BackgroundJob:
    """What a worker needs to run one background Response."""

    response_id: str
    scope: str
    body: dict[str, Any]
    """The validated request body, as JSON; the worker decodes it again."""
    run_id: str | None = None
    """The interrupt run (UUID hex) an interrupt graph's job drives."""
    trace: dict[str, str] | None = None
    """The submitting request's trace context (``traceparent``...), so the
    run's spans join its trace; ``None`` when tracing is off."""


@dataclass(frozen=True, slots=True)
class StoredEvent:
    sequence: int
    event: dict[str, Any]
    """The stream event as a foreground stream would send it (``type``, its
    fields and ``sequence_number``); replay frames it as SSE."""


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One kept Response of a ``previous_response_id`` chain."""

    response: dict[str, Any]
    """The Response object (its ``output`` is what the turn answered)."""
    input_items: list[dict[str, Any]]
    """The items its request carried, in Responses item shapes with ids."""

    def items(self) -> list[dict[str, Any]]:
        """What the turn adds to the conversation: its input, then its output."""
        return [*self.input_items, *self.response.get("output", ())]


Enqueue = Callable[[Any], Awaitable[object]]
"""Puts a job on the backend's queue inside the store's transaction (the
argument is that transaction's connection, or ``None`` for memory stores)."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """What the store knows when a run of a job starts."""

    snapshot: dict[str, Any] | None
    """The Response as stored (``None``: it is gone)."""
    cancel_requested: bool
    """A client asked to cancel it."""
    lost: int
    """Earlier runs that ended without a terminal status or a hand-back:
    their worker died (or broke) while running them."""
    last_sequence: int
    """The sequence number of the last stored event (``-1``: none)."""
    waited: float | None = None
    """Seconds since the Response was submitted, on its first run only (the
    queue wait); ``None`` on a re-run."""
    job: BackgroundJob | None = None
    """What to run (``None``: the Response is gone, or was kept from the
    foreground and has no job)."""


class ResponseStore(Protocol):
    """Durable state of background Responses, shared by API and workers."""

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
        """Store a queued Response and enqueue its job, both or neither;
        with a known key, return the original. ``input_items``: the items
        its request carried (for ``input_items`` and ``chain``);
        ``most_unfinished``: the background Responses its scope may have
        queued or running, this one included (checked atomically with the
        store, over every process: two submissions at once never both take
        the last place).

        Returns the stored snapshot and whether it was created now.

        Raises:
            IdempotencyKeyReusedError: the key was used with another body.
            LimitReached: the scope has ``most_unfinished`` already.
            RunBusyError: another Response of the scope that is not finished
                drives the same interrupt run (``job.run_id``); the store
                keeps this atomic across processes, so of two racing creates
                one is stored.
        """
        ...

    async def drives(self, scope: str, run_id: str) -> bool:
        """Whether a queued or running Response of ``scope`` drives the
        interrupt run ``run_id`` (another scope's runs are not seen)."""
        ...

    async def get(self, response_id: str, scope: str) -> dict[str, Any] | None:
        """The snapshot, or ``None`` when unknown or in another scope."""
        ...

    async def job(self, response_id: str) -> BackgroundJob | None: ...

    async def set_snapshot(
        self,
        response_id: str,
        snapshot: dict[str, Any],
        *,
        enqueue: Enqueue | None = None,
        events: list[dict[str, Any]] | None = None,
    ) -> bool:
        """Replace the snapshot (status changes, the terminal object); a
        terminal snapshot is never replaced (``False`` then). ``enqueue``
        runs in the same transaction when it is replaced (the end's event),
        and ``events`` are appended in it (the stream's last events: a
        follower sees them and the terminal status together)."""
        ...

    async def start_attempt(self, response_id: str) -> Attempt:
        """Record that a run of the job starts, unless the Response ended or
        its cancel was requested (then the run must not start); one step
        that also reads what the run needs."""
        ...

    async def hand_back(self, response_id: str) -> None:
        """Record that the running attempt stopped unfinished for a worker
        shutdown (not a loss); the Response is ``queued`` again."""
        ...

    async def append_events(
        self, response_id: str, events: list[dict[str, Any]]
    ) -> None:
        """Append events in order; each gets the next sequence number."""
        ...

    def events(self, response_id: str, after: int) -> AsyncIterator[StoredEvent]:
        """Events with a sequence number above ``after``, following new ones
        until the Response is terminal."""
        ...

    async def request_cancel(self, response_id: str) -> bool:
        """Flag the Response for cancellation; ``False`` if already terminal."""
        ...

    async def cancel_requested(self, response_id: str) -> bool: ...

    async def save(
        self, scope: str, response: dict[str, Any], input_items: list[dict[str, Any]]
    ) -> None:
        """Keep a finished foreground Response and the items it was asked."""
        ...

    async def input_items(
        self, response_id: str, scope: str
    ) -> list[dict[str, Any]] | None:
        """The items the Response's request carried, in order; ``None`` when
        unknown or in another scope."""
        ...

    async def chain(self, response_id: str, scope: str) -> list[StoredTurn] | None:
        """The Response and those it continues (``previous_response_id``),
        oldest first; ``None`` when unknown or in another scope. A deleted
        or expired ancestor ends the chain."""
        ...

    async def output_items(
        self, item_ids: Sequence[str], scope: str
    ) -> dict[str, dict[str, Any]]:
        """The output items with these ids of the Responses kept in
        ``scope``, by id (what an ``item_reference`` names); ids unknown,
        deleted or of another scope are absent."""
        ...

    async def delete(self, response_id: str, scope: str) -> bool:
        """Remove the Response, its events and its items; ``False`` when
        unknown or in another scope."""
        ...

    async def delete_expired(self, before: dt.datetime) -> int:
        """Remove every finished Response created before ``before`` (with
        its events and items); return how many."""
        ...
