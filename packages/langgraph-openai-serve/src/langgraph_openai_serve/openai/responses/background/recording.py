"""The Responses encoder's recording sink: a background run's events are
stored, not sent.

The executor takes them as the dicts the encoder's events are made of (and
the terminal Response object as it is) instead of SSE frames it would have
to parse back; replay frames them (``control.replay``).
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.openai.responses.sinks import OpenMessage

RECORDED = b"\n"
"""What the encoder's methods return once events are recorded: not a frame,
but not empty either, so ``stream_frames`` hands control back after every
event (a status update is stored at once, not with the next event)."""


class RecordingSink:
    """Collects each event; ``take()`` hands over those not yet stored."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending: list[dict[str, Any]] = []

    def take(self) -> list[dict[str, Any]]:
        events, self.pending = self.pending, []
        return events

    def event(self, type_: str, fields: dict[str, Any], sequence: int) -> bytes:
        self.pending.append({"type": type_, **fields, "sequence_number": sequence})
        return RECORDED

    def text(self, message: OpenMessage, sequence: int, delta: str) -> bytes:
        self.pending.append(
            {
                "type": "response.output_text.delta",
                "item_id": message.item["id"],
                "output_index": message.index,
                "content_index": 0,
                "logprobs": [],
                "delta": delta,
                "sequence_number": sequence,
            }
        )
        return RECORDED
