"""How a stream that has started ends early, and the deadline of its run.

Before a stream's first frame an error is an envelope (``openai/errors.py``).
After it, the stream ends with the protocol's in-band failure instead
(``response.failed``, or the Chat error chunk then ``[DONE]``); a
``StreamFailure`` is the ``code`` and message that event carries.

The run deadline lives here, not in a module of its own, because it is half
of the same decision: the encoders' ``stream_frames`` consume a run inside
``run_deadline``, and when the stream fails, ``stream_failure`` asks that
deadline whether the time limit cut the run (``run_timeout``) or something
broke (``server_error``). A non-streamed run is limited in
``graph/runner.py``, which raises ``RunTimeoutError`` instead.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass

from langgraph_openai_serve.error_envelope import INTERNAL_ERROR_MESSAGE
from langgraph_openai_serve.graph.errors import RunTimeoutError
from langgraph_openai_serve.openai.errors import UNAVAILABLE, refusal, server_failure
from langgraph_openai_serve.operations.outages import database_fault

logger = logging.getLogger("langgraph_openai_serve")


@dataclass(frozen=True, slots=True)
class StreamFailure:
    """Why a started stream ends early: the ``code`` and ``message`` of its
    in-band failure event (``response.failed`` / the Chat error chunk)."""

    code: str
    message: str


INTERNAL_FAILURE = StreamFailure("server_error", INTERNAL_ERROR_MESSAGE)
SHUTDOWN_FAILURE = StreamFailure(
    "server_shutdown",
    "The server shut down before the response finished; retry the request.",
)


def refusal_failure(exc: Exception) -> StreamFailure | None:
    """How a run accepted earlier ends when it is refused later (a background
    resume whose pause went after submit): with the ``code``
    and message the request would have been refused with at once (the
    envelope table's); ``None`` when ``exc`` is no refusal."""
    refused = refusal(exc)
    return None if refused is None else StreamFailure(*refused)


def run_timeout_failure(seconds: float) -> StreamFailure:
    return StreamFailure("run_timeout", str(RunTimeoutError(seconds)))


class _NoDeadline:
    """``asyncio.timeout(None)`` without its cost, for runs without a limit."""

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None

    def expired(self) -> bool:
        return False


_NO_DEADLINE = _NoDeadline()
Deadline = asyncio.Timeout | _NoDeadline


def run_deadline(seconds: float | None) -> Deadline:
    """The context a stream's run is consumed in: ``seconds`` (``None``: no
    limit) after entering it, the consuming task is cancelled."""
    return _NO_DEADLINE if seconds is None else asyncio.timeout(seconds)


def stream_failure(
    deadline: Deadline, time_limit: float | None, surface: str
) -> StreamFailure:
    """Classify (and log) the exception a started stream is handling: the run
    outlived ``time_limit`` (its ``deadline`` expired), a failure the client
    is told about (an answer not matching its schema), the database was
    away, or something broke."""
    if time_limit is not None and deadline.expired():
        logger.warning("%s.run_timeout seconds=%s", surface, time_limit)
        return run_timeout_failure(time_limit)
    handled = sys.exc_info()[1]
    told = server_failure(handled)
    if told is not None:
        logger.warning("%s.%s: %s", surface, told[0], told[1])
        return StreamFailure(*told)
    fault = database_fault(handled) if handled is not None else None
    if fault is not None:
        logger.warning("%s.database_%s: %s", surface, fault, handled)
        return StreamFailure(fault, UNAVAILABLE[fault])
    logger.exception("%s.stream_failed", surface)
    return INTERNAL_FAILURE
