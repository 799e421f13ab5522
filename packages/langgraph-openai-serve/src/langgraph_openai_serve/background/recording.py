"""The Responses encoder of a background run: structured events, not bytes.

A background run's events are stored, not sent, so the executor takes them
as the dicts the encoder builds (and the terminal Response object as it is)
instead of SSE frames it would have to parse back. Replay frames them.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.openai.responses.encode import ResponseStreamEncoder
from langgraph_openai_serve.openai.responses.items import ResponseShell

_RECORDED = b"\n"
"""What the encoder's methods return once events are recorded: not a frame,
but not empty either, so ``stream_frames`` hands control back after every
event (a status update is stored at once, not with the next event)."""

_TERMINAL_EVENTS = frozenset(
    {"response.completed", "response.incomplete", "response.failed"}
)


class RecordingEncoder(ResponseStreamEncoder):
    """Collects each event; ``take()`` hands over those not yet stored.

    A re-run (``after`` the stored stream's last sequence number) continues
    the stored stream: its sequence numbers go on and it begins with
    ``response.in_progress`` alone, not a second ``response.created``.
    """

    def __init__(self, shell: ResponseShell, *, after: int = -1) -> None:
        super().__init__(shell)
        self.sequence = after
        self.rerun = after >= 0
        self.began = False
        """Whether this attempt's stream has started (``start()``)."""
        self.pending: list[dict[str, Any]] = []

    def take(self) -> list[dict[str, Any]]:
        events, self.pending = self.pending, []
        return events

    def _event(self, type_: str, fields: dict[str, Any]) -> bytes:
        self.sequence += 1
        self.pending.append({"type": type_, **fields, "sequence_number": self.sequence})
        if type_ in _TERMINAL_EVENTS:
            self.terminal = fields["response"]
        return _RECORDED

    def start(self) -> bytes:
        """The stream's first events, once: the executor starts the stream
        when it stores the ``in_progress`` status, before the run's frames."""
        if self.began:
            return _RECORDED
        self.began = True
        if not self.rerun:
            return super().start()
        snapshot = self.shell.body("in_progress", [])
        return self._event("response.in_progress", {"response": snapshot})

    def text(self, delta: str) -> bytes:
        message = self.answer
        if message is None:
            message, _ = self._open_answer()
        message.parts.append(delta)
        return self._event(
            "response.output_text.delta",
            {
                "item_id": message.item["id"],
                "output_index": message.index,
                "content_index": 0,
                "logprobs": [],
                "delta": delta,
            },
        )
