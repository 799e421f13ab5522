"""UI events: what a turn shows, as plain data independent of Chainlit.

``stream.read_stream`` turns Responses stream events into the first group;
``conversation.Conversation`` adds the turn-level ones. ``app.py`` renders
each event; tests collect them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from lgos_chainlit.files import DisplayedFile
from lgos_chainlit.interrupts import InterruptPrompt


@dataclass(frozen=True, slots=True)
class CommentaryStarted:
    """A ``phase="commentary"`` message began (progress, not the answer)."""

    item_id: str


@dataclass(frozen=True, slots=True)
class CommentaryDelta:
    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class CommentaryDone:
    item_id: str
    text: str


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """A token of the answer (a ``final_answer`` or phase-less message)."""

    text: str


@dataclass(frozen=True, slots=True)
class RefusalDelta:
    """A token of a refusal, which is not answer text."""

    text: str


@dataclass(frozen=True, slots=True)
class CitationAdded:
    """A ``url_citation`` on the answer."""

    url: str
    title: str
    start_index: int
    end_index: int


ToolKind: TypeAlias = Literal["custom", "web_search"]


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A server tool began (a custom tool call or a web search)."""

    call_id: str
    kind: ToolKind
    name: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    kind: ToolKind
    name: str
    input: str
    output: str
    status: str


@dataclass(frozen=True, slots=True)
class StreamFinished:
    """The terminal Response (completed, incomplete or failed)."""

    response: Any


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """One request ended; ``usage`` is ``None`` when the graph reported none."""

    response_id: str
    status: str
    incomplete_reason: str | None = None
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class FileShown:
    """A ``display_file`` call: the downloaded file to show."""

    file: DisplayedFile


@dataclass(frozen=True, slots=True)
class InterruptAsked:
    """The run paused; the question was saved before this event."""

    prompt: InterruptPrompt
    remaining: int
    """Questions of the same pause still unanswered, this one included."""


@dataclass(frozen=True, slots=True)
class BackgroundStarted:
    """The chat is following a background run (queued now or picked up again);
    the UI offers to cancel it until ``BackgroundEnded``."""

    response_id: str
    picked_up: bool = False
    """Picked up after a reload or a stop, not just submitted."""


@dataclass(frozen=True, slots=True)
class BackgroundEnded:
    """The background run reached a terminal status (or is no longer followed)."""

    response_id: str
    status: str


@dataclass(frozen=True, slots=True)
class AnswerReplaced:
    """The whole answer text, for a run whose earlier tokens were not shown
    here (picked up mid-stream after a reload, or followed by polling)."""

    text: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should read: an error, a refusal to resume, a hint."""

    level: Literal["info", "warning", "error"]
    text: str


StreamEvent: TypeAlias = (
    CommentaryStarted
    | CommentaryDelta
    | CommentaryDone
    | AnswerDelta
    | RefusalDelta
    | CitationAdded
    | ToolStarted
    | ToolFinished
    | StreamFinished
)
UIEvent: TypeAlias = (
    CommentaryStarted
    | CommentaryDelta
    | CommentaryDone
    | AnswerDelta
    | RefusalDelta
    | CitationAdded
    | ToolStarted
    | ToolFinished
    | TurnFinished
    | FileShown
    | InterruptAsked
    | BackgroundStarted
    | BackgroundEnded
    | AnswerReplaced
    | Notice
)
