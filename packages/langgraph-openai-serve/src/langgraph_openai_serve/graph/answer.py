"""``Answer``: the protocol-neutral reading of a graph's final ``AIMessage``.

It is built once per run, after the graph finishes; every encoder renders the
same ``Answer``, so Chat Completions and Responses agree on text, refusals,
citations, tool calls and why the answer stopped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import AIMessage

from langgraph_openai_serve.graph.citations import Citation, citations_from_message
from langgraph_openai_serve.graph.errors import GraphError

StopReason = Literal["complete", "length", "content_filter"]
_STOP_REASONS: dict[object, StopReason] = {
    "length": "length",
    "max_tokens": "length",
    "content_filter": "content_filter",
}


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete function call for the client; ``arguments`` is JSON text."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What the assistant said, as every protocol needs it."""

    message: AIMessage
    text: str
    refusal: str | None
    citations: tuple[Citation, ...]
    tool_calls: tuple[ToolCall, ...]
    truncated_calls: tuple[ToolCall, ...]
    """Calls whose arguments did not parse (kept raw; never to be executed)."""
    stop: StopReason

    @classmethod
    def from_message(cls, message: AIMessage) -> Answer:
        """Read ``message``; raises ``GraphError`` if it breaks the contract."""
        return cls(
            message=message,
            text=message.text,
            refusal=_refusal(message),
            citations=citations_from_message(message),
            tool_calls=tuple(_tool_calls(message)),
            truncated_calls=tuple(
                ToolCall(
                    id=call.get("id") or "",
                    name=call.get("name") or "",
                    arguments=call.get("args") or "",
                )
                for call in message.invalid_tool_calls
            ),
            stop=_stop_reason(message),
        )


def _refusal(message: AIMessage) -> str | None:
    parts: list[str] = []
    if isinstance(message.content, list):
        parts.extend(
            block["refusal"]
            for block in message.content
            if isinstance(block, dict)
            and block.get("type") == "refusal"
            and isinstance(block.get("refusal"), str)
        )
    legacy = message.additional_kwargs.get("refusal")
    if not parts and isinstance(legacy, str):
        parts.append(legacy)
    return "".join(parts) or None


def _tool_calls(message: AIMessage) -> list[ToolCall]:
    calls = []
    for call in message.tool_calls:
        call_id = call.get("id")
        if not call_id:
            raise GraphError(f"Tool call '{call['name']}' in the answer has no id.")
        calls.append(
            ToolCall(id=call_id, name=call["name"], arguments=json.dumps(call["args"]))
        )
    return calls


def _stop_reason(message: AIMessage) -> StopReason:
    metadata = message.response_metadata
    reason = metadata.get("finish_reason") or metadata.get("stop_reason")
    return _STOP_REASONS.get(reason, "complete")
