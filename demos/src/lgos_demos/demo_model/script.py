"""The scripted reply to one Chat Completions request.

In order:

1. Tool calls, when the bound tools and the user's words call for them
   (``tools.py``).
2. JSON matching ``response_format`` (structured output).
3. An answer from what the request carried: numbered sources (in
   instructions or tool results) become sentences ending in ``[n]`` markers;
   other tool results are reported; with neither, a reply showing the
   question, the instructions followed and how much history was visible.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lgos_demos.demo_model.conversation import Conversation, read_conversation
from lgos_demos.demo_model.tools import (
    ToolCall,
    choose_tools,
    fill,
    make_call,
    read_tools,
)
from lgos_demos.sources import read_sources
from lgos_demos.words import first_sentence

MAX_CITED = 3
_MARKERS = re.compile(r"\s*\[\d+\]")
_QUOTE_LIMIT = 160


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model answers: text, or tool calls (then text is empty)."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


def script_reply(
    messages: Sequence[Any],
    *,
    tools: Any = None,
    tool_choice: Any = None,
    parallel_tool_calls: bool | None = None,
    response_format: Any = None,
    new_id: Callable[[], str] | None = None,
) -> Reply:
    """The reply to a request, decided from its messages and tools alone."""
    conversation = read_conversation(messages)
    chosen = choose_tools(
        read_tools(tools),
        tool_choice,
        conversation,
        parallel=parallel_tool_calls is not False,
    )
    if chosen:
        return Reply(
            tool_calls=tuple(make_call(t, conversation, new_id) for t in chosen)
        )
    structured = _structured(response_format, conversation)
    if structured is not None:
        return Reply(text=structured)
    return Reply(text=answer(conversation))


def answer(conversation: Conversation) -> str:
    """The text answer: from sources and tool results, else a plain reply."""
    parts = [
        _report(result.name, result.content)
        for result in conversation.tool_results
        if not _has_link(result.content)
    ]
    texts = [
        *conversation.instructions,
        *(r.content for r in conversation.tool_results),
    ]
    sources = [source for text in texts for source in read_sources(text)]
    if sources:
        parts.append("Here is what I found.")
        for number, source in enumerate(sources[:MAX_CITED], 1):
            sentence = first_sentence(_MARKERS.sub("", source.snippet) or source.title)
            claim = sentence[:-1] if sentence.endswith((".", "!", "?")) else sentence
            parts.append(f"{claim.rstrip()} [{number}].")
    elif any("Sources: none" in text for text in conversation.instructions):
        parts.append("I found no sources about that, so I cannot answer from them.")
    if not parts:
        return plain_reply(conversation)
    return " ".join(parts)


def plain_reply(conversation: Conversation) -> str:
    """A reply that shows what the model was given."""
    question = _quote(conversation.question) or "nothing yet"
    parts = [f"You said: “{question}”."]
    if conversation.instructions:
        parts.append(f"My instructions: “{_quote(conversation.instructions[-1])}”.")
    earlier = conversation.user_turns[:-1]
    if earlier:
        count = len(earlier)
        noun = "message" if count == 1 else "messages"
        parts.append(
            f"I can see {count} earlier {noun} of yours; the last one was "
            f"“{_quote(earlier[-1])}”."
        )
    else:
        parts.append("I see no earlier messages in this conversation.")
    parts.append("I am the offline demo model, so this reply is scripted.")
    return " ".join(parts)


def _structured(response_format: Any, conversation: Conversation) -> str | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return json.dumps(fill(schema or {"type": "object"}, conversation) or {})
    if kind == "json_object":
        return json.dumps({"answer": plain_reply(conversation)})
    return None


def _report(name: str, content: str) -> str:
    fields = _json_fields(content)
    if fields:
        # A JSON result (display_file's ``{"displayed": true, ...}``) in
        # words: cutting it at its first "." would show broken JSON.
        listed = ", ".join(f"{key}: {value}" for key, value in fields)
        return f"{name} reported {listed}."
    said = first_sentence(content) if content.strip() else "nothing."
    return f"{name} returned: {said}"


def _json_fields(content: str) -> list[tuple[str, str]]:
    """The plain fields of a JSON object result, as words; [] otherwise."""
    try:
        data = json.loads(content)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    fields: list[tuple[str, str]] = []
    for key, value in data.items():
        if isinstance(value, bool):
            fields.append((str(key), "yes" if value else "no"))
        elif isinstance(value, str | int | float):
            fields.append((str(key), str(value).rstrip(".")))
    return fields


def _has_link(text: str) -> bool:
    return "http://" in text or "https://" in text


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _QUOTE_LIMIT:
        return flat
    return flat[:_QUOTE_LIMIT].rsplit(" ", 1)[0] + "…"
