"""Server-tool activity read from completed root-graph updates.

When a request selects server tools, the runner also subscribes to
LangGraph's ``updates`` stream. ``ServerToolTracker`` turns each selected
tool call in an AIMessage into a ``ServerToolCall`` and its ToolMessage into
a ``ServerToolResult``. Calls to unselected tools stay private; calls that
arrived as replayed input are not emitted again; a call id emitted twice, or
a selected call that never gets a result, breaks the contract.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Set
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langgraph_openai_serve.graph.errors import GraphError


@dataclass(frozen=True, slots=True)
class ServerToolCall:
    """The graph called a selected server tool."""

    call_id: str
    name: str
    args: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """A selected server tool returned; ``output`` is its ToolMessage text."""

    call_id: str
    name: str
    output: str
    failed: bool = False
    """The ToolMessage says the tool failed (``status="error"``)."""


def replayed_call_ids(messages: list[BaseMessage]) -> frozenset[str]:
    """Tool call ids already present in the request's input messages."""
    ids: set[str] = set()
    for message in messages:
        if isinstance(message, AIMessage):
            ids.update(call["id"] for call in message.tool_calls if call["id"])
        elif isinstance(message, ToolMessage):
            ids.add(message.tool_call_id)
    return frozenset(ids)


class ServerToolTracker:
    """Per-run state: which selected calls were emitted and still await results."""

    def __init__(self, selected: Set[str], replayed: Set[str]) -> None:
        self.selected = selected
        self.replayed = replayed
        self.emitted: set[str] = set()
        self.pending: dict[str, str] = {}

    def read(self, update: Any) -> Iterator[ServerToolCall | ServerToolResult]:
        """Events for one ``updates`` chunk (``{node: state_update}``)."""
        if not isinstance(update, Mapping):
            return
        for node_update in update.values():
            for message in _messages(node_update):
                if isinstance(message, AIMessage):
                    yield from self._calls(message)
                elif isinstance(message, ToolMessage):
                    name = self.pending.pop(message.tool_call_id, None)
                    if name is not None:
                        yield ServerToolResult(
                            message.tool_call_id,
                            name,
                            tool_output(message),
                            message.status == "error",
                        )

    def _calls(self, message: AIMessage) -> Iterator[ServerToolCall]:
        for call in message.tool_calls:
            call_id = call["id"]
            if call["name"] not in self.selected or not call_id:
                continue
            if call_id in self.replayed:
                continue
            if call_id in self.emitted:
                raise GraphError(f"Server tool call id '{call_id}' was emitted twice.")
            self.emitted.add(call_id)
            self.pending[call_id] = call["name"]
            yield ServerToolCall(call_id, call["name"], call["args"])

    def finish(self) -> None:
        """Raise if a selected call never got its result."""
        if self.pending:
            names = ", ".join(sorted(set(self.pending.values())))
            raise GraphError(f"Server tool calls without a result: {names}.")


def tool_output(message: ToolMessage) -> str:
    """A ToolMessage's text, including ``langchain-openai``'s custom-tool
    ``custom_tool_call_output`` blocks."""
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "custom_tool_call_output":
            output = block.get("output", "")
            parts.append(output if isinstance(output, str) else json.dumps(output))
    return "".join(parts)


def _messages(node_update: Any) -> Iterator[BaseMessage]:
    values = node_update.values() if isinstance(node_update, Mapping) else ()
    for value in values:
        if isinstance(value, BaseMessage):
            yield value
        elif isinstance(value, list | tuple):
            yield from (item for item in value if isinstance(item, BaseMessage))
