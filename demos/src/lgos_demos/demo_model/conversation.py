"""What the demo model reads from Chat Completions ``messages``.

Parsing is lenient on purpose: unknown roles, content parts and fields are
kept as text or ignored, never rejected, so whatever a client such as
``langchain-openai`` sends is understood.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_INSTRUCTION_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer to the assistant's latest tool calls."""

    name: str
    content: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """The parts of a conversation the scripted replies depend on."""

    instructions: tuple[str, ...] = ()
    """System and developer message texts, in order."""
    user_turns: tuple[str, ...] = ()
    """Every user message text, in order."""
    last_role: str = "user"
    tool_results: tuple[ToolResult, ...] = ()
    """Tool messages after the last assistant message."""
    transcript: str = ""
    """All message texts joined, for looking up ids the user mentioned."""

    @property
    def question(self) -> str:
        """The latest user message text."""
        return self.user_turns[-1] if self.user_turns else ""


def text_of(content: Any) -> str:
    """The readable text of message content: a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return _part_text(content)
    if isinstance(content, Sequence):
        return "\n".join(text for part in content if (text := _part_text(part)))
    return str(content)


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    if isinstance(part.get("text"), str):
        return str(part["text"])
    if kind == "custom_tool_call_output" or "output" in part:
        return text_of(part.get("output"))
    if kind == "file":
        file = part.get("file")
        file_id = file.get("file_id") if isinstance(file, dict) else None
        return f"(attached file {file_id})" if file_id else "(attached file)"
    if kind in {"image_url", "input_image"}:
        return "(attached image)"
    if kind in {"input_audio", "audio"}:
        return "(attached audio)"
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return str(part["refusal"])
    return ""


def read_conversation(messages: Sequence[Any]) -> Conversation:
    """Summarise ``messages`` (Chat Completions message objects)."""
    instructions: list[str] = []
    users: list[str] = []
    texts: list[str] = []
    results: list[ToolResult] = []
    call_names: dict[str, str] = {}
    last_role = "user"
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "user")
        text = text_of(message.get("content"))
        texts.append(text)
        if role in _INSTRUCTION_ROLES:
            instructions.append(text)
            continue
        last_role = role
        if role == "user":
            users.append(text)
            results.clear()
        elif role == "assistant":
            results.clear()
            call_names = _call_names(message.get("tool_calls"))
        elif role in {"tool", "function"}:
            call_id = message.get("tool_call_id")
            name = call_names.get(call_id, "") if isinstance(call_id, str) else ""
            results.append(
                ToolResult(
                    name=name or str(message.get("name") or "tool"), content=text
                )
            )
    return Conversation(
        instructions=tuple(instructions),
        user_turns=tuple(users),
        last_role=last_role,
        tool_results=tuple(results),
        transcript="\n".join(texts),
    )


def _call_names(tool_calls: Any) -> dict[str, str]:
    names: dict[str, str] = {}
    if not isinstance(tool_calls, list):
        return names
    for call in tool_calls:
        if not isinstance(call, dict) or not isinstance(call.get("id"), str):
            continue
        body = call.get("function") or call.get("custom") or {}
        if isinstance(body, dict) and isinstance(body.get("name"), str):
            names[call["id"]] = body["name"]
    return names
