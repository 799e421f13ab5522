"""Responses stream events -> UI events.

``read_stream`` follows the typed event lifecycle by output item: messages
with ``phase="commentary"`` become commentary (shown apart from the answer),
every other message's text deltas are the answer, refusal deltas stay
refusals, annotations become citations, and custom tool calls and web
searches become tool activity. Function-call argument deltas are ignored: the
completed items on the terminal Response are what the client executes and
replays. The stream must end with ``response.completed``, ``.incomplete`` or
``.failed``; an ``error`` event or an early end raises ``StreamError``.

A background run's stream can be read in several connections (after a drop,
from the last sequence number seen): pass the same ``StreamState`` to each.
With ``partial=True`` (the stream was picked up mid-way, after a reload) text
deltas of items whose start was not seen are skipped: they might be
commentary.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass, field
from typing import Any

from lgos_chainlit.events import (
    AnswerDelta,
    CitationAdded,
    CommentaryDelta,
    CommentaryDone,
    CommentaryStarted,
    RefusalDelta,
    StreamEvent,
    StreamFinished,
    ToolFinished,
    ToolStarted,
)

TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_DELTAS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.output_text.annotation.added",
    }
)


class StreamError(Exception):
    """The stream reported an error or ended without a terminal Response."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class _ToolCall:
    name: str
    input: str = ""


@dataclass
class StreamState:
    """What one Response's stream has shown so far (kept across reconnects)."""

    commentary: set[str] = field(default_factory=set)
    messages: set[str] = field(default_factory=set)
    tools: dict[str, _ToolCall] = field(default_factory=dict)
    skipped: bool = False
    """Some text was skipped (its item started before the part we read)."""


def _added(item: Any, state: StreamState) -> StreamEvent | None:
    kind = getattr(item, "type", None)
    if kind == "message" and getattr(item, "phase", None) == "commentary":
        state.commentary.add(item.id)
        return CommentaryStarted(item_id=item.id)
    if kind == "message":
        state.messages.add(item.id)
    if kind == "custom_tool_call":
        state.tools[item.call_id] = _ToolCall(name=item.name)
        return ToolStarted(call_id=item.call_id, kind="custom", name=item.name)
    if kind == "web_search_call":
        return ToolStarted(call_id=item.id, kind="web_search", name="web_search")
    return None


def _search_query(item: Any) -> str:
    action = getattr(item, "action", None)
    query = getattr(action, "query", None)
    if isinstance(query, str) and query:
        return query
    queries = getattr(action, "queries", None) or []
    return ", ".join(q for q in queries if isinstance(q, str))


def _done(item: Any, state: StreamState) -> StreamEvent | None:
    kind = getattr(item, "type", None)
    if kind == "message" and item.id in state.commentary:
        text = "".join(getattr(part, "text", "") for part in item.content)
        return CommentaryDone(item_id=item.id, text=text)
    if kind == "custom_tool_call":
        call = state.tools.setdefault(item.call_id, _ToolCall(name=item.name))
        call.input = item.input
        return None
    if kind == "custom_tool_call_output":
        call = state.tools.pop(item.call_id, _ToolCall(name="custom tool"))
        output = item.output if isinstance(item.output, str) else str(item.output)
        return ToolFinished(
            call_id=item.call_id,
            kind="custom",
            name=call.name,
            input=call.input,
            output=output,
            status=getattr(item, "status", None) or "completed",
        )
    if kind == "web_search_call":
        return ToolFinished(
            call_id=item.id,
            kind="web_search",
            name="web_search",
            input=_search_query(item),
            output="",
            status=item.status,
        )
    return None


def _citation(annotation: Any) -> CitationAdded | None:
    data = (
        annotation
        if isinstance(annotation, dict)
        else annotation.to_dict()
        if hasattr(annotation, "to_dict")
        else {}
    )
    if data.get("type") != "url_citation":
        return None
    return CitationAdded(
        url=str(data.get("url", "")),
        title=str(data.get("title") or ""),
        start_index=int(data.get("start_index", 0)),
        end_index=int(data.get("end_index", 0)),
    )


def _unseen(event: Any, state: StreamState, partial: bool) -> bool:
    item_id = getattr(event, "item_id", None)
    if not partial or item_id in state.commentary or item_id in state.messages:
        return False
    state.skipped = True
    return True


async def read_stream(
    events: AsyncIterable[Any],
    state: StreamState | None = None,
    *,
    partial: bool = False,
) -> AsyncGenerator[StreamEvent, None]:
    """UI events for one streamed Response, ending with ``StreamFinished``."""
    state = state if state is not None else StreamState()
    # Close the source (an SDK stream's own async generator) here, not
    # later from the garbage collector.
    iterator = aiter(events)
    try:
        async for event in iterator:
            kind = getattr(event, "type", None)
            ui: StreamEvent | None = None
            if kind in _DELTAS and _unseen(event, state, partial):
                continue
            if kind == "response.output_item.added":
                ui = _added(event.item, state)
            elif kind == "response.output_item.done":
                ui = _done(event.item, state)
            elif kind == "response.output_text.delta":
                if event.item_id in state.commentary:
                    ui = CommentaryDelta(item_id=event.item_id, text=event.delta)
                elif event.delta:
                    ui = AnswerDelta(text=event.delta)
            elif kind == "response.refusal.delta":
                if event.delta:
                    ui = RefusalDelta(text=event.delta)
            elif kind == "response.output_text.annotation.added":
                if event.item_id not in state.commentary:
                    ui = _citation(event.annotation)
            elif kind in TERMINAL:
                yield StreamFinished(response=event.response)
                return
            elif kind == "error":
                raise StreamError(event.message, getattr(event, "code", None))
            if ui is not None:
                yield ui
        raise StreamError("the stream ended without a final response")
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


def answer_text(response: Any) -> str:
    """The answer text of a finished Response (commentary left out)."""
    parts: list[str] = []
    for item in getattr(response, "output", None) or []:
        if getattr(item, "type", None) != "message":
            continue
        if getattr(item, "phase", None) == "commentary":
            continue
        for part in getattr(item, "content", None) or []:
            text = getattr(part, "text", None)
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)
