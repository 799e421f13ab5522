"""Neutral events one graph run yields, whatever protocol renders them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from langgraph_openai_serve.graph.answer import Answer
from langgraph_openai_serve.graph.interrupts import PendingInterrupt
from langgraph_openai_serve.graph.server_tools import ServerToolCall, ServerToolResult
from langgraph_openai_serve.graph.status import StatusUpdate
from langgraph_openai_serve.graph.usage import Usage


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of answer text, in order; only produced for streaming runs."""

    text: str


@dataclass(frozen=True, slots=True)
class RunCompleted:
    """The graph finished; always the last event of a successful run."""

    answer: Answer
    usage: Usage | None


@dataclass(frozen=True, slots=True)
class RunPaused:
    """An interrupt run paused; ``text`` is what streamed before the pause."""

    interrupts: tuple[PendingInterrupt, ...]
    text: str
    usage: Usage | None


RunEvent: TypeAlias = (
    TextDelta
    | StatusUpdate
    | ServerToolCall
    | ServerToolResult
    | RunCompleted
    | RunPaused
)
