"""Interrupts: paused-run items as questions, answers as a resume.

A paused run finishes its Response with one item per pending LangGraph
interrupt, in the presentation its graph chose: an ``lgos_interrupt``
function call (answered by a ``function_call_output`` with any text), or an
``mcp_approval_request`` (answered by an ``mcp_approval_response``: approve or
reject). ``PendingInterrupt`` keeps the paused Response id and those items
exactly as received (the UI persists it before asking, so a reloaded page can
still answer), collects one answer per item, and builds the resume input for
all of them at once, sent with ``previous_response_id``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from lgos_chainlit.ledger import Item, function_output

INTERRUPT_TOOL = "lgos_interrupt"
APPROVAL_REQUEST = "mcp_approval_request"
APPROVAL_CHOICES = ("approve", "reject")


def is_interrupt(item: Item) -> bool:
    """Whether an output item presents a pending interrupt."""
    if item.get("type") == APPROVAL_REQUEST:
        return True
    return item.get("type") == "function_call" and item.get("name") == INTERRUPT_TOOL


def interrupt_key(item: Item) -> str:
    """The id a resume answers: a call id, or an approval request's id."""
    key = (
        item.get("id") if item.get("type") == APPROVAL_REQUEST else item.get("call_id")
    )
    return str(key or "")


class AnswerError(ValueError):
    """An answer that the interrupt does not accept."""


@dataclass(frozen=True, slots=True)
class InterruptPrompt:
    """What one interrupt asks, read from its call's arguments."""

    call_id: str
    question: str
    choices: tuple[str, ...] = ()
    allow_other: bool = False

    @property
    def free_text(self) -> bool:
        """Whether a typed answer is accepted (always, when there are no choices)."""
        return self.allow_other or not self.choices


def _choice(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def parse_prompt(call: Item) -> InterruptPrompt:
    """The prompt of one ``lgos_interrupt`` call.

    A payload without a ``question`` string is shown as its JSON text and
    answered freely.
    """
    call_id = interrupt_key(call)
    raw = call.get("arguments", "")
    try:
        payload = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        payload = None
    if call.get("type") == APPROVAL_REQUEST:
        has_question = isinstance(payload, dict) and isinstance(
            payload.get("question"), str
        )
        text = raw if isinstance(raw, str) else json.dumps(raw)
        question = (
            payload["question"]
            if has_question
            else f"Approve {call.get('name')}? {text}"
        )
        return InterruptPrompt(
            call_id=call_id, question=question, choices=APPROVAL_CHOICES
        )
    if not isinstance(payload, dict) or not isinstance(payload.get("question"), str):
        text = raw if isinstance(raw, str) else json.dumps(raw)
        return InterruptPrompt(call_id=call_id, question=text)
    choices = payload.get("choices")
    return InterruptPrompt(
        call_id=call_id,
        question=payload["question"],
        choices=tuple(_choice(c) for c in choices) if isinstance(choices, list) else (),
        allow_other=payload.get("allow_other") is True,
    )


@dataclass
class PendingInterrupt:
    """A paused run waiting for the user: its Response id and exact calls."""

    response_id: str
    calls: list[Item]
    answers: dict[str, str] = field(default_factory=dict)

    def prompts(self) -> list[InterruptPrompt]:
        return [parse_prompt(call) for call in self.calls]

    def next_prompt(self) -> InterruptPrompt | None:
        """The first question not answered yet."""
        for prompt in self.prompts():
            if prompt.call_id not in self.answers:
                return prompt
        return None

    @property
    def complete(self) -> bool:
        return self.next_prompt() is None

    def answer(self, call_id: str, text: str, *, typed: bool = False) -> None:
        """Record the answer to one call; ``typed`` answers need free text."""
        prompt = next((p for p in self.prompts() if p.call_id == call_id), None)
        if prompt is None:
            raise AnswerError("that question is not pending any more")
        if call_id in self.answers:
            raise AnswerError("that question was already answered")
        if typed and not prompt.free_text and text not in prompt.choices:
            raise AnswerError("please choose one of: " + ", ".join(prompt.choices))
        if not typed and text not in prompt.choices:
            raise AnswerError(f"{text!r} is not one of the offered choices")
        self.answers[call_id] = text

    def outputs(self) -> list[Item]:
        """One answer item per interrupt, in call order."""
        keys = [interrupt_key(c) for c in self.calls]
        missing = [key for key in keys if key not in self.answers]
        if missing:
            raise AnswerError(f"unanswered interrupt calls: {missing}")
        return [
            _approval_response(key, self.answers[key])
            if call.get("type") == APPROVAL_REQUEST
            else function_output(key, self.answers[key])
            for call, key in zip(self.calls, keys, strict=True)
        ]

    def ledger_items(self) -> list[Item]:
        """What the answered pause adds to the conversation: the calls and
        their outputs, replayed in later turns. Approval items are not
        replayable input, so an approved pause leaves only its answer."""
        if any(call.get("type") == APPROVAL_REQUEST for call in self.calls):
            return []
        return [*self.calls, *self.outputs()]

    def to_json(self) -> dict[str, Any]:
        return {
            "response_id": self.response_id,
            "calls": copy.deepcopy(self.calls),
            "answers": dict(self.answers),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PendingInterrupt:
        return cls(
            response_id=str(data["response_id"]),
            calls=[dict(call) for call in data["calls"]],
            answers={str(k): str(v) for k, v in data.get("answers", {}).items()},
        )


def _approval_response(approval_request_id: str, answer: str) -> Item:
    return {
        "type": "mcp_approval_response",
        "approval_request_id": approval_request_id,
        "approve": answer == "approve",
    }


def explain_rejection(status: int, code: str | None, message: str) -> str:
    """A user-facing explanation of a refused resume (HTTP 409 and others)."""
    if code == "run_busy":
        return (
            "This paused run is busy: another answer to it is being processed "
            "(perhaps from another tab). Wait a moment, then answer again."
        )
    if code == "interrupt_state_conflict":
        return (
            "The server no longer has this question pending: it was already "
            "answered, expired, or does not match the paused run. The run cannot "
            f"be resumed; send a new message to start again. ({message})"
        )
    label = f"HTTP {status}, {code}" if code else f"HTTP {status}"
    return f"The answer was refused ({label}): {message}"


def keeps_pending(code: str | None) -> bool:
    """Whether the paused run may still be answered after this refusal.

    Only ``interrupt_state_conflict`` proves the pause is gone; after
    ``run_busy``, a transport error or a server error, asking again can work.
    """
    return code != "interrupt_state_conflict"
