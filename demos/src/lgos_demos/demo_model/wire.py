"""A scripted ``Reply`` as Chat Completions JSON: one object, or stream chunks.

Token counts are word pieces (a word with its leading whitespace): the same
pieces the stream sends one chunk at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lgos_demos.demo_model.script import Reply
from lgos_demos.demo_model.tools import ToolCall

_PIECE = re.compile(r"\s*\S+|\s+")


def pieces(text: str) -> list[str]:
    """``text`` as streamed tokens; joined, they give ``text`` back."""
    return _PIECE.findall(text)


def count_tokens(text: str) -> int:
    return len(pieces(text))


@dataclass(frozen=True, slots=True)
class Shaped:
    """One reply cut to the request's limits, ready to encode."""

    tokens: tuple[str, ...]
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str

    @classmethod
    def of(cls, reply: Reply, *, max_tokens: int | None, stop: list[str]) -> Shaped:
        if reply.tool_calls:
            return cls((), reply.tool_calls, "tool_calls")
        text, finish = reply.text, "stop"
        for marker in stop:
            if marker and marker in text:
                text = text[: text.index(marker)]
        tokens = pieces(text)
        if max_tokens is not None and len(tokens) > max_tokens:
            tokens, finish = tokens[:max_tokens], "length"
        return cls(tuple(tokens), (), finish)

    @property
    def text(self) -> str:
        return "".join(self.tokens)

    @property
    def completion_tokens(self) -> int:
        arguments = sum(count_tokens(call.arguments) + 1 for call in self.tool_calls)
        return len(self.tokens) + arguments


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


@dataclass(frozen=True, slots=True)
class Envelope:
    """What every object of one completion shares."""

    completion_id: str
    model: str
    created: int
    n: int
    prompt_tokens: int

    def head(self, kind: str) -> dict[str, Any]:
        return {
            "id": self.completion_id,
            "object": kind,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "lgos-demo",
        }

    def usage(self, shaped: Shaped) -> dict[str, Any]:
        return usage(self.prompt_tokens, shaped.completion_tokens * self.n)


def completion(shaped: Shaped, envelope: Envelope) -> dict[str, Any]:
    """The ``chat.completion`` object (``n`` identical choices)."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": shaped.text if not shaped.tool_calls else None,
        "refusal": None,
        "annotations": [],
    }
    if shaped.tool_calls:
        message["tool_calls"] = [_call(call) for call in shaped.tool_calls]
    choices = [
        {
            "index": index,
            "message": message,
            "logprobs": None,
            "finish_reason": shaped.finish_reason,
        }
        for index in range(envelope.n)
    ]
    return {
        **envelope.head("chat.completion"),
        "choices": choices,
        "usage": envelope.usage(shaped),
    }


def stream_chunks(
    shaped: Shaped, envelope: Envelope, *, include_usage: bool
) -> Iterator[tuple[dict[str, Any], bool]]:
    """``chat.completion.chunk`` objects, each with whether it carries a token
    (the server paces those)."""
    base = envelope.head("chat.completion.chunk")
    if include_usage:
        base["usage"] = None

    def chunk(
        index: int, delta: dict[str, Any], finish: str | None = None
    ) -> dict[str, Any]:
        choice = {
            "index": index,
            "delta": delta,
            "logprobs": None,
            "finish_reason": finish,
        }
        return {**base, "choices": [choice]}

    opening: dict[str, Any] = {"role": "assistant", "content": "", "refusal": None}
    for index in range(envelope.n):
        if shaped.tool_calls:
            yield chunk(index, {**opening, "content": None}), False
            for position, call in enumerate(shaped.tool_calls):
                yield chunk(index, {"tool_calls": [_call_head(position, call)]}), True
                for piece in _argument_pieces(call.arguments):
                    tail = _call_tail(position, call, piece)
                    yield chunk(index, {"tool_calls": [tail]}), True
        else:
            yield chunk(index, opening), False
            for token in shaped.tokens:
                yield chunk(index, {"content": token}), True
        yield chunk(index, {}, shaped.finish_reason), False
    if include_usage:
        final = {**base, "choices": [], "usage": envelope.usage(shaped)}
        yield final, False


def _call(call: ToolCall) -> dict[str, Any]:
    if call.kind == "custom":
        return {
            "id": call.id,
            "type": "custom",
            "custom": {"name": call.name, "input": call.arguments},
        }
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


def _call_head(position: int, call: ToolCall) -> dict[str, Any]:
    if call.kind == "custom":
        return {
            "index": position,
            "id": call.id,
            "type": "custom",
            "custom": {"name": call.name, "input": ""},
        }
    return {
        "index": position,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }


def _call_tail(position: int, call: ToolCall, piece: str) -> dict[str, Any]:
    if call.kind == "custom":
        return {"index": position, "custom": {"input": piece}}
    return {"index": position, "function": {"arguments": piece}}


def _argument_pieces(arguments: str) -> list[str]:
    """Arguments in two halves, as providers stream partial JSON."""
    if len(arguments) < 2:
        return [arguments]
    half = len(arguments) // 2
    return [arguments[:half], arguments[half:]]
