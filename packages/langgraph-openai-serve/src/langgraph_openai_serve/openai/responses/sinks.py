"""Where the Responses encoder's events go: the frames of an SSE stream.

``SseSink`` makes each event the SSE frame a client reads; it splices a text
delta into a byte template shaped once per message (``OpenMessage``), so a
token costs one ``json.dumps`` of its text. The recording sink of background
runs keeps the events instead (``background/recording.py``); ``event_frame``
frames a stored one when it is replayed.
"""

from __future__ import annotations

from typing import Any, Protocol

from langgraph_openai_serve.compact_json import dumps


def event_frame(event: dict[str, Any]) -> bytes:
    """The SSE frame of one stream event (a stored one, replayed)."""
    return f"event: {event['type']}\ndata: {dumps(event)}\n\n".encode()


class OpenMessage:
    """The final-answer message while its text streams."""

    __slots__ = ("index", "item", "parts", "prefix", "suffix")

    def __init__(self, item: dict[str, Any], index: int) -> None:
        self.item = item
        self.index = index
        self.parts: list[str] = []
        head = (
            'event: response.output_text.delta\ndata: {"type":'
            '"response.output_text.delta","item_id":'
            f'"{item["id"]}","output_index":{index},"content_index":0,'
            '"logprobs":[],"sequence_number":'
        )
        self.prefix = head.encode()
        self.suffix = b"}\n\n"


class Sink(Protocol):
    """Where a stream's events go, in order, each with its sequence number."""

    def event(self, type_: str, fields: dict[str, Any], sequence: int) -> bytes: ...

    def text(self, message: OpenMessage, sequence: int, delta: str) -> bytes:
        """An answer text delta of ``message`` (the hot path: one per token)."""
        ...


class SseSink:
    """Each event as its SSE frame."""

    __slots__ = ()

    def event(self, type_: str, fields: dict[str, Any], sequence: int) -> bytes:
        return event_frame({"type": type_, **fields, "sequence_number": sequence})

    def text(self, message: OpenMessage, sequence: int, delta: str) -> bytes:
        return (
            message.prefix
            + str(sequence).encode()
            + b',"delta":'
            + dumps(delta).encode()
            + message.suffix
        )


SSE = SseSink()
