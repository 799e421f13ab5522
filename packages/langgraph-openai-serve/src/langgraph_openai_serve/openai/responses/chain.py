"""``previous_response_id`` on a kept Response: continue from its items.

With a response store, a request naming a kept Response runs the graph on
the whole conversation: the input and output items of every Response of the
chain, oldest first, then the request's own input. Each Response's
``instructions`` stay with it (as at OpenAI): only the new request's apply.
The graph sees exactly what a client replaying those items would send, so
any graph continues this way.

Interrupt graphs keep their resume contract: a ``previous_response_id`` that
names a pause (a Response whose output presents pending interrupts), or a
Response the store does not keep, is a resume and goes to the paused run as
before. One naming a kept Response that is not a pause continues the
conversation in a new run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.pause import INTERRUPT_TOOL_NAME
from langgraph_openai_serve.openai.responses.schemas import (
    InputItem,
    Message,
    ResponseCreateRequest,
)
from langgraph_openai_serve.responses.errors import PreviousResponseNotFoundError
from langgraph_openai_serve.responses.protocol import (
    TERMINAL_STATUSES,
    ResponseStore,
)

_ITEMS = TypeAdapter(list[InputItem])

_NOT_REPLAYED = frozenset({"mcp_approval_request", "mcp_approval_response"})
"""Approval exchanges answer a paused run through its checkpoint; they are
not conversation the graph reads."""


def is_pause(response: dict[str, Any]) -> bool:
    """Whether a Response presents pending interrupts (awaits answers):
    nothing in a Response answers its own interrupt calls."""
    return any(
        item.get("type") == "mcp_approval_request"
        or (
            item.get("type") == "function_call"
            and item.get("name") == INTERRUPT_TOOL_NAME
        )
        for item in response.get("output", ())
    )


@dataclass(frozen=True)
class Continuation:
    """What a request naming a previous Response runs."""

    run_body: ResponseCreateRequest
    """``body`` itself for an interrupt resume, otherwise a request whose
    input is the chain's items then ``body``'s, without
    ``previous_response_id`` (the caller's Response still shows it)."""
    paused: dict[str, Any] | None = None
    """The kept pause an interrupt resume answers (``None`` when the store
    does not keep it or this is not a resume)."""


async def continued_request(
    store: ResponseStore,
    body: ResponseCreateRequest,
    scope: str,
    *,
    interrupts: bool,
) -> Continuation:
    """What the graph runs for ``body`` (which names a previous Response).

    Raises:
        PreviousResponseNotFoundError: unknown, deleted, expired or another
            scope's id (for a graph without interrupts).
        InvalidRequestError: the named Response has not finished, or its
            items cannot be replayed.
    """
    previous = body.previous_response_id
    assert previous is not None
    chain = await store.chain(previous, scope)
    if chain is None:
        if interrupts:
            return Continuation(body)  # a pause the store does not keep
        raise PreviousResponseNotFoundError(previous)
    head = chain[-1].response
    if interrupts and is_pause(head):
        return Continuation(body, paused=head)
    if head.get("status") not in TERMINAL_STATUSES:
        raise InvalidRequestError(
            f"Response '{previous}' has not finished; continue it once it has.",
            param="previous_response_id",
        )
    history = [item for turn in chain for item in turn.items()]
    return Continuation(
        with_history(
            body,
            history,
            param="previous_response_id",
            source=f"Response '{previous}'",
            update={"previous_response_id": None},
        )
    )


def with_history(
    body: ResponseCreateRequest,
    history: list[dict[str, Any]],
    *,
    param: str,
    source: str,
    update: dict[str, Any] | None = None,
) -> ResponseCreateRequest:
    """``body`` with the kept ``history`` items before its own input (and
    ``update`` applied); approval exchanges are left out.

    Raises:
        InvalidRequestError: (``param``) ``source`` holds items the graph
            cannot be given.
    """
    try:
        replayed = _ITEMS.validate_python(
            [item for item in history if item.get("type") not in _NOT_REPLAYED]
        )
    except ValidationError as exc:
        raise InvalidRequestError(
            f"{source} holds items that cannot be continued.", param=param
        ) from exc
    new_input = (
        [Message(role="user", content=body.input)]
        if isinstance(body.input, str)
        else list(body.input)
    )
    return body.model_copy(update={"input": [*replayed, *new_input], **(update or {})})
