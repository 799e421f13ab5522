"""The contracts of batches: their store, their queue and the steps it runs.

A batch lives in a ``BatchStore`` in its scope (the tenant): its Batch object,
counters, and once validated its lines, each with its result when it has one.
A line's result is recorded at most once (``record``), so however often a
line runs (a worker lost mid-line runs it again), its ``custom_id`` appears
exactly once across the output and error files, which are written from the
store when the batch ends.

Work moves as ``BatchStep`` jobs on the job queue (``jobs.py``): one
``validate``, then
``chunk`` steps (each runs a run of consecutive lines, one at a time; at most
``concurrency`` of a batch are queued or running at once, each handing on to
the next), then one ``finalize``. Steps are idempotent, so the queue may run
one again after a crash.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

TERMINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})
OPEN_STATUSES = ("validating", "in_progress")
"""Statuses a batch expires from when its window ends."""
OVERDUE_PAGE = 100

StepKind = Literal["validate", "chunk", "finalize"]


@dataclass(frozen=True, slots=True)
class BatchStep:
    kind: StepKind
    batch_id: str
    chunk: int = 0

    @property
    def lock(self) -> str:
        """Steps with one lock never run at once: a batch's validate and
        finalize share the batch's, each chunk has its own."""
        if self.kind == "chunk":
            return f"{self.batch_id}/{self.chunk}"
        return self.batch_id


Enqueue = Callable[[Any], Awaitable[None]]
"""Puts steps on the queue inside the store's transaction (the argument is
that transaction's connection, or ``None`` for memory stores). If it raises,
the store's change is undone and the error raised: both happen or neither."""

ChunkEnqueue = Callable[[Any, list[int]], Awaitable[None]]
"""Queues the chunks just claimed, inside the claiming transaction."""


@dataclass(frozen=True, slots=True)
class BatchLine:
    seq: int
    """0-based position among the batch's requests (chunks are runs of it)."""
    number: int
    """1-based line number in the input file."""
    custom_id: str
    body: str
    """The request body as JSON text."""


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def body(self) -> dict[str, Any]:
        """OpenAI's ``BatchUsage``."""
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


@dataclass(frozen=True, slots=True)
class LineResult:
    seq: int
    failed: bool
    """The line goes to the error file."""
    text: str
    """The output line (JSON text, no newline)."""
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """What a worker reads of a batch."""

    scope: str
    batch: dict[str, Any]
    """The Batch object as stored (without ``request_counts`` and ``usage``)."""
    ending: str | None
    """Why it is finalizing: ``completed``, ``expired`` (``cancelling`` says
    ``cancelled`` itself)."""
    chunks: int
    completed: int
    failed: int

    @property
    def status(self) -> str:
        return str(self.batch["status"])

    @property
    def total(self) -> int:
        return int(self.batch.get("request_counts", {}).get("total", 0))


class BatchStore(Protocol):
    async def create(
        self,
        scope: str,
        batch: dict[str, Any],
        enqueue: Enqueue,
        most_open: int | None = None,
    ) -> None:
        """Keep a new ``validating`` batch and queue its validation;
        ``most_open``: the batches ``scope`` may have not yet ended, this one
        included (checked atomically with the store, over every process).

        Raises:
            LimitReached: the scope has ``most_open`` open already.
        """
        ...

    async def get(self, batch_id: str, scope: str) -> dict[str, Any] | None:
        """The Batch object, or ``None`` when unknown or in another scope."""
        ...

    async def page(
        self, scope: str, after: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], bool]:
        """The scope's batches, newest first, after the id ``after``; and
        whether more follow."""
        ...

    async def read(self, batch_id: str) -> StoredBatch | None: ...

    async def add_lines(self, batch_id: str, lines: Sequence[BatchLine]) -> None: ...

    async def drop_lines(self, batch_id: str) -> None:
        """Forget the batch's lines and their results (once it ended, the
        files keep them); its counters stay."""
        ...

    async def transition(
        self,
        batch_id: str,
        before: frozenset[str],
        fields: dict[str, Any],
        *,
        ending: str | None = None,
        chunks: int | None = None,
        enqueue: Enqueue | None = None,
    ) -> bool:
        """Merge ``fields`` (``status`` and its time among them) into the
        Batch object if its status is in ``before``, and queue steps in the
        same transaction; whether it did. ``chunks``: how many chunks the
        batch's lines make (set when it starts)."""
        ...

    async def claim_chunks(
        self, batch_id: str, most: int, enqueue: ChunkEnqueue
    ) -> list[int]:
        """Take the next unclaimed chunks (up to ``most``) and queue them in
        the same transaction; the numbers taken (none when all are)."""
        ...

    async def claimed(self, batch_id: str) -> int:
        """How many chunks have been taken so far."""
        ...

    async def pending(self, batch_id: str, first: int, last: int) -> list[BatchLine]:
        """The lines with ``first <= seq < last`` that have no result yet."""
        ...

    async def record(self, batch_id: str, result: LineResult) -> bool:
        """Keep a line's result unless it has one (or the batch holds no such
        line); count it. Whether kept."""
        ...

    async def settle(self, batch_id: str, code: str, message: str) -> None:
        """Give every line without a result an error line with ``code`` (not
        counted as failed: cancelled and expired lines never ran)."""
        ...

    def results(self, batch_id: str, *, failed: bool) -> AsyncIterator[str]:
        """The output (``failed=False``) or error lines, in input order."""
        ...

    async def overdue(self, now: float) -> list[str]:
        """Batches still ``validating`` or ``in_progress`` whose window ended
        at or before ``now`` (Unix seconds), oldest first, up to a page."""
        ...
