"""Which bound tools the demo model calls, and with what arguments.

A tool is chosen when the user's latest words mention it: its name's words,
a few synonyms, or the words of its description. Arguments are filled from
the tool's JSON Schema and the user's words: a query gets the question's
content words, a name gets the subject of the question (``version of
langgraph`` → ``langgraph``), an ``*_id`` gets a matching id from the
conversation, an enum gets the value whose description fits best.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lgos_demos.demo_model.conversation import Conversation
from lgos_demos.words import STOPWORDS, content_words, tokens

ToolKind = Literal["function", "custom"]

_SYNONYMS = {
    "search": ("find", "look", "lookup", "research", "docs", "documentation"),
    "web": ("online", "internet", "website"),
    "version": ("versions", "installed", "release"),
    "display": ("show", "render", "chart", "plot"),
    "weather": ("forecast", "temperature"),
}
_QUERY_NAMES = frozenset(
    {"query", "q", "search_query", "question", "text", "input", "prompt", "__arg1"}
    | {"topic", "keywords", "search", "terms", "request"}
)
_SUBJECT_HINTS = ("name", "package", "library", "module", "city", "location")
_SUBJECT_LEADS = frozenset({"of", "for", "about", "on", "in"})
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool the request bound: a JSON function or a free-form custom tool."""

    kind: ToolKind
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def name_words(self) -> frozenset[str]:
        """The words of the tool's name and their synonyms."""
        words = {w for w in re.split(r"[_\-\s]+", self.name.lower()) if w}
        for word in list(words):
            words.update(_SYNONYMS.get(word, ()))
        return frozenset(words - STOPWORDS)

    @property
    def keywords(self) -> frozenset[str]:
        """Words in the user's message that make the model call this tool."""
        return self.name_words | frozenset(content_words(self.description))


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model makes: JSON ``arguments`` or a custom tool's ``input``."""

    id: str
    kind: ToolKind
    name: str
    arguments: str


def read_tools(raw: Any) -> list[ToolSpec]:
    """Tool declarations in any shape a client sends; unknown entries skipped.

    Accepts Chat Completions ``{"type": "function", "function": {...}}`` and
    ``{"type": "custom", "custom": {...}}``, and the flat forms
    (``{"type": "custom", "name": ...}``) ``langchain-openai`` sends.
    """
    if not isinstance(raw, list):
        return []
    specs: list[ToolSpec] = []
    for entry in raw:
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type", "function")
        if kind not in ("function", "custom"):
            continue
        nested = entry.get(kind)
        body: dict[str, Any] = nested if isinstance(nested, dict) else entry
        name = body.get("name")
        if not isinstance(name, str) or not name:
            continue
        parameters = body.get("parameters")
        specs.append(
            ToolSpec(
                kind=kind,
                name=name,
                description=str(body.get("description") or ""),
                parameters=parameters if isinstance(parameters, dict) else {},
            )
        )
    return specs


def choose_tools(
    tools: Sequence[ToolSpec],
    tool_choice: Any,
    conversation: Conversation,
    *,
    parallel: bool = True,
) -> list[ToolSpec]:
    """The tools to call now; empty means answer in text.

    ``auto`` calls only right after a user message (never in a loop after tool
    results); ``required`` and a named choice always call.
    """
    if not tools or tool_choice == "none":
        return []
    named = _named_choice(tool_choice)
    if named is not None:
        return [tool for tool in tools if tool.name == named][:1]
    words = _words(conversation.question)
    matched = [tool for tool in tools if words & tool.keywords]
    if tool_choice == "required":
        matched = matched or [tools[0]]
    elif conversation.last_role != "user":
        return []
    return matched if parallel else matched[:1]


def make_call(
    tool: ToolSpec,
    conversation: Conversation,
    new_id: Callable[[], str] | None = None,
) -> ToolCall:
    """A call of ``tool`` with arguments taken from ``conversation``."""
    call_id = new_id() if new_id is not None else f"call_{uuid.uuid4().hex[:24]}"
    conversation = focus(conversation, tool)
    if tool.kind == "custom":
        text = _query(conversation, tool)
        return ToolCall(id=call_id, kind="custom", name=tool.name, arguments=text)
    schema = tool.parameters or {"type": "object", "properties": {}}
    arguments = fill(schema, conversation, tool=tool)
    if not isinstance(arguments, dict):
        arguments = {}
    return ToolCall(
        id=call_id, kind="function", name=tool.name, arguments=json.dumps(arguments)
    )


def focus(conversation: Conversation, tool: ToolSpec) -> Conversation:
    """``conversation`` with its question cut to the sentences about ``tool``
    (so each of several parallel calls gets its own part of the question)."""
    sentences = _SENTENCES.split(conversation.question.strip())
    about = [s for s in sentences if _words(s) & tool.keywords]
    if not about or len(about) == len(sentences):
        return conversation
    turns = (*conversation.user_turns[:-1], " ".join(about))
    return dataclasses.replace(conversation, user_turns=turns)


def fill(
    schema: Any,
    conversation: Conversation,
    *,
    name: str = "",
    tool: ToolSpec | None = None,
) -> Any:
    """A value matching the JSON Schema ``schema``, drawn from the user's words."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return choose_enum(
            schema["enum"], str(schema.get("description") or ""), conversation
        )
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            usable = [
                o for o in options if isinstance(o, dict) and o.get("type") != "null"
            ]
            if usable:
                return fill(usable[0], conversation, name=name, tool=tool)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return _fill_object(schema, conversation, tool)
    if kind == "array":
        return [
            fill(
                schema.get("items", {"type": "string"}),
                conversation,
                name=name,
                tool=tool,
            )
        ]
    if kind in ("integer", "number"):
        return _number(schema, conversation, integer=kind == "integer")
    if kind == "boolean":
        default = schema.get("default")
        return default if isinstance(default, bool) else True
    if kind == "null":
        return None
    return _string(name, conversation, tool)


def choose_enum(
    values: Sequence[Any], description: str, conversation: Conversation
) -> Any:
    """The enum value the user's words fit best; ties go to the first.

    A value scores one point per user word in its name and in its part of
    the description (``"docs: questions about ...; chat: greetings ..."``).
    """
    words = set(content_words(conversation.question))
    best, best_score = values[0], 0
    for value in values:
        label = str(value)
        own = set(tokens(label))
        part = re.search(rf"\b{re.escape(label)}\b\s*[:=]\s*([^;\n]*)", description)
        if part:
            own.update(content_words(part.group(1)))
        score = len(words & own)
        if score > best_score:
            best, best_score = value, score
    return best


def _fill_object(
    schema: dict[str, Any], conversation: Conversation, tool: ToolSpec | None
) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    required = schema.get("required")
    names = (
        [n for n in properties if n in required]
        if isinstance(required, list)
        else list(properties)
    )
    return {n: fill(properties[n], conversation, name=n, tool=tool) for n in names}


def _number(
    schema: dict[str, Any], conversation: Conversation, *, integer: bool
) -> float | int:
    found = _NUMBER.search(conversation.question)
    default = schema.get("default", schema.get("minimum", 1))
    value = (
        float(found.group())
        if found
        else float(default if isinstance(default, int | float) else 1)
    )
    return int(value) if integer else value


def _string(name: str, conversation: Conversation, tool: ToolSpec | None) -> str:
    lowered = name.lower()
    if lowered in _QUERY_NAMES:
        return _query(conversation, tool)
    if lowered == "id" or lowered.endswith("_id"):
        return _mentioned_id(lowered.removesuffix("id").rstrip("_"), conversation)
    if any(hint in lowered for hint in _SUBJECT_HINTS):
        return _subject(conversation, tool)
    return conversation.question.strip()


def _query(conversation: Conversation, tool: ToolSpec | None) -> str:
    """The question's content words, without the words that picked the tool."""
    skip = tool.name_words if tool is not None else frozenset()
    question = conversation.question
    words = [w for w in content_words(question) if w not in skip]
    return " ".join(_as_written(w, question) for w in words) or question.strip()


def _subject(conversation: Conversation, tool: ToolSpec | None) -> str:
    """What the question is about: the word after "of"/"for"/..., else the
    first content word that did not pick the tool."""
    skip = tool.name_words if tool is not None else frozenset()
    question = conversation.question
    words = tokens(question)
    for lead, word in itertools.pairwise(words):
        if lead in _SUBJECT_LEADS and word not in STOPWORDS and word not in skip:
            return _as_written(word, question)
    for word in words:
        if len(word) > 1 and word not in STOPWORDS and word not in skip:
            return _as_written(word, question)
    return question.strip()


def _as_written(word: str, text: str) -> str:
    """``word`` with the capitalisation it has in ``text``."""
    found = re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE)
    return found.group() if found else word


def _mentioned_id(prefix: str, conversation: Conversation) -> str:
    pattern = (
        rf"\b{re.escape(prefix)}[-_][A-Za-z0-9_-]+"
        if prefix
        else r"\b[a-z]+[-_][A-Za-z0-9]{6,}"
    )
    found = re.findall(pattern, conversation.transcript)
    return found[-1] if found else ""


def _words(text: str) -> set[str]:
    """Tokens and their ``-``/``_`` parts (``order-42`` also gives ``order``)."""
    found = set(tokens(text))
    return found | {part for word in found for part in re.split(r"[-_]", word) if part}


def _named_choice(tool_choice: Any) -> str | None:
    if not isinstance(tool_choice, dict):
        return None
    kind = tool_choice.get("type")
    body = (
        tool_choice.get(kind)
        if isinstance(tool_choice.get(kind), dict)
        else tool_choice
    )
    name = body.get("name") if isinstance(body, dict) else None
    return name if isinstance(name, str) and kind in ("function", "custom") else None
