"""A run's events through the Responses encoder: the stream a client reads
(or a background run records), ended by the protocol's failure events when
the run breaks or outlives its time limit.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from langgraph_openai_serve.graph.completion import watch_end
from langgraph_openai_serve.graph.events import (
    RunCompleted,
    RunEvent,
    RunPaused,
    TextDelta,
)
from langgraph_openai_serve.graph.server_tools import ServerToolCall, ServerToolResult
from langgraph_openai_serve.graph.status import StatusUpdate
from langgraph_openai_serve.observability.runs import NO_WATCH, RunWatch
from langgraph_openai_serve.openai.context import RequestLog
from langgraph_openai_serve.openai.responses.encode import ResponseStreamEncoder
from langgraph_openai_serve.openai.responses.items import answer_status
from langgraph_openai_serve.openai.stream_failure import run_deadline, stream_failure

logger = logging.getLogger("langgraph_openai_serve")


async def stream_frames(
    events: AsyncIterator[RunEvent],
    encoder: ResponseStreamEncoder,
    log: RequestLog | None = None,
    *,
    time_limit: float | None = None,
    keep: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    watch: RunWatch = NO_WATCH,
    opened: bool = False,
    passes: Callable[[Exception], object] | None = None,
) -> AsyncIterator[bytes]:
    """Encode a run; a failure ends with ``error`` and ``response.failed``.

    A run still going after ``time_limit`` seconds is cancelled and fails
    with ``run_timeout``. Only a consumer that awaits nothing between frames
    may set it: the deadline cancels whatever the consuming task awaits.
    ``keep`` stores the terminal Response before its event is sent, so a
    client that has it can retrieve or continue it at once. ``watch``
    records how the run went. ``opened``: the stream's first events were
    made already (a background run stores them with its ``in_progress``).
    ``passes``: errors that do not end the stream but go to its consumer (a
    background run waits out a database fault instead of failing).
    """
    watch.start()
    if not opened:
        yield encoder.start()
    deadline = run_deadline(time_limit)
    first_text = True
    try:
        async with deadline:
            async for event in events:
                if type(event) is TextDelta:
                    if first_text:
                        first_text = False
                        watch.first_text()
                    yield encoder.text(event.text)
                elif type(event) is StatusUpdate:
                    frame = encoder.status(event)
                    if frame:
                        yield frame
                elif type(event) is ServerToolCall:
                    yield encoder.server_call(event)
                elif type(event) is ServerToolResult:
                    watch.tool(event.name, event.failed)
                    yield encoder.server_result(event)
                elif type(event) is RunCompleted:
                    if log is not None:
                        log.stream_outcome = answer_status(event.answer)
                    watch_end(watch, event)
                    frame = encoder.finish(event.answer, event.usage)
                    if keep is not None:
                        await keep(encoder.terminal)  # type: ignore[arg-type]
                    yield frame
                elif type(event) is RunPaused:
                    if log is not None:
                        log.stream_outcome = "paused"
                    watch_end(watch, event)
                    frame = encoder.pause(event)
                    if keep is not None:
                        await keep(encoder.terminal)  # type: ignore[arg-type]
                    yield frame
    except Exception as exc:
        if passes is not None and passes(exc):
            raise
        failure = stream_failure(deadline, time_limit, "responses")
        if log is not None:
            log.stream_outcome = "failed"
        watch.finish("failed", error=exc)
        frame = encoder.fail(failure)
        if keep is not None and encoder.terminal is not None:
            try:
                await keep(encoder.terminal)
            except Exception:  # the stream still ends with its failure
                logger.exception("responses.keep_failed")
        yield frame
    finally:
        watch.cut()  # nothing when the run ended above
