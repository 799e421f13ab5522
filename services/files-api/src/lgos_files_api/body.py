"""A request body read as it arrives, given up when it stops arriving.

uvicorn waits for a body as long as its sender keeps the connection open;
a sender that stops mid-upload would keep its upload slot and its part
buffer for good. Here each wait for the next piece of the body is bounded
by the idle timeout: past it the read fails with ``UploadStalledError``,
the upload is discarded and the connection closed with a 408. The bound is
on each wait, not on the whole body: a large upload on a slow line goes on
as long as bytes keep coming.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.requests import ClientDisconnect
from starlette.types import Receive

from lgos_files_api.errors import UploadStalledError


async def body_chunks(receive: Receive, idle_timeout: float) -> AsyncIterator[bytes]:
    """The body's chunks from the ASGI ``receive`` channel.

    Raises:
        UploadStalledError: nothing arrived for ``idle_timeout`` seconds.
        ClientDisconnect: the client left.
    """
    while True:
        try:
            async with asyncio.timeout(idle_timeout):
                message = await receive()
        except TimeoutError:
            raise UploadStalledError(idle_timeout) from None
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return
