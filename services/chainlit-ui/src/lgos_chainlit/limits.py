"""How large a typed message may be, and a clear answer when it is larger.

Chainlit receives messages over Socket.IO, whose server drops the connection
on a frame above ``max_http_buffer_size`` (1 MB by default): the browser
reconnects and the message vanishes without a word. ``lgos-chainlit`` raises
that bound to uvicorn's own websocket frame limit (16 MiB), far above
``LGOS_CHAINLIT_MAX_MESSAGE_BYTES``, so a message over our limit still
arrives and is answered where the user typed it, and the chat goes on.
"""

from __future__ import annotations

from lgos_chainlit.events import Notice

SOCKET_FRAME_BYTES = 16 * 1024 * 1024
"""uvicorn's default ``ws_max_size``: no larger frame reaches Chainlit."""


def accept_socket_frames(max_bytes: int = SOCKET_FRAME_BYTES) -> None:
    """Let Chainlit's Socket.IO server take frames up to ``max_bytes``."""
    # Imported here: importing Chainlit's server builds its app (app.py only).
    from chainlit.server import sio

    sio.eio.max_http_buffer_size = max_bytes


def oversized_message(text: str, max_bytes: int) -> Notice | None:
    """The notice for a message over ``max_bytes`` (UTF-8), else ``None``."""
    size = len(text.encode())
    if size <= max_bytes:
        return None
    return Notice(
        "error",
        f"Your message is {_size(size)}; this chat accepts at most "
        f"{_size(max_bytes)}. Shorten it and send it again.",
    )


def _size(count: int) -> str:
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
