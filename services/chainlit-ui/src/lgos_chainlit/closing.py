"""HTTP bodies ended by the task that reads them.

Every streamed body the UI reads (a Responses event stream, a file's bytes)
is closed by its reader on every way out: the last event, an error, the
reader cancelled (the user pressed stop, the chat ended) or stopping early.
``owned`` wraps an SDK stream for that; ``run_out`` finishes any body
iterator once its response is closed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar


class Body(Protocol):
    """Something read with ``anext``: an SDK stream, a body iterator."""

    def __anext__(self) -> Awaitable[Any]: ...


class SdkStream(Body, Protocol):
    """What ``owned`` needs of the SDK's ``AsyncStream``."""

    async def close(self) -> None: ...


S = TypeVar("S", bound=SdkStream)


@asynccontextmanager
async def owned(stream: S) -> AsyncIterator[S]:
    """``stream``, ended by the task that reads it when the block exits.

    However the block ends (the last event, an error, the reader cancelled
    or stopping early), the HTTP body is closed and the stream run out.
    """
    try:
        yield stream
    finally:
        try:
            await stream.close()
        finally:
            await run_out(stream)


async def run_out(body: Body) -> None:
    """Finish an SDK or httpx body iterator whose HTTP response is closed.

    The SDK reads a body through a chain of async generators (events, SSE
    decoder, body reader) that closing the response does not end. Left
    suspended, the chain is a reference cycle: the garbage collector would
    finalize it later, from another task or after the event loop closed, and
    closing its generators concurrently there fails ("async generator
    already executing"). With the response closed, the next read ends the
    whole chain here (events still in the buffer come first and are dropped).
    """
    while True:
        try:
            await anext(body)
        except Exception:
            return
