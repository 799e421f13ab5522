"""What a create request continues, and in whose name it runs.

A request's ``item_reference`` items are first replaced by the kept items
they name (``references.py``). It may go on from a Conversation
(``conversation``: its items first, the Conversation claimed for this
turn), from a kept chain (``previous_response_id`` with a response store:
the chain's items first), or from a paused run (the answers of a resume,
which claims the pause's Conversation when it had one). A background
Response's id is reserved before a Conversation is claimed: the claim is
made in its name and held while it is queued and run; a foreground turn
claims with a token of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph_openai_serve.conversations.turns import ConversationTurn
from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.openai.responses.background.submit import (
    Reservation,
    reserve,
)
from langgraph_openai_serve.openai.responses.chain import continued_request
from langgraph_openai_serve.openai.responses.conversation import (
    conversation_request,
    paused_conversation_turn,
)
from langgraph_openai_serve.openai.responses.items import new_id
from langgraph_openai_serve.openai.responses.references import (
    with_references_resolved,
)
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import ServeState


@dataclass(frozen=True, slots=True)
class Continued:
    """A create request with what it continues."""

    body: ResponseCreateRequest
    """What the client sent (a resume of a paused Conversation turn: with
    that Conversation)."""
    run_body: ResponseCreateRequest
    """What the graph runs: the continued items, then the new input."""
    scope: str
    turn: ConversationTurn | None = None
    """The Conversation turn this request holds, if it names one."""
    reservation: Reservation | None = None
    """The ids of the background Response it creates (``None``: foreground)."""

    @property
    def continues(self) -> str | None:
        """The kept Response ``run_body`` goes on from (its
        ``previous_response_id``), when it holds a chain."""
        return (
            self.body.previous_response_id if self.run_body is not self.body else None
        )


async def continued(
    state: ServeState,
    config: GraphConfig,
    body: ResponseCreateRequest,
    scope: str,
) -> Continued:
    """Read what ``body`` continues and claim its Conversation turn.

    Raises:
        InvalidRequestError: an ``item_reference`` names no kept item.
        ConversationLockedError: another turn holds the Conversation.
        (Request)ConversationNotFoundError, PreviousResponseNotFoundError,
        PausedRunNotFoundError: what it names is unknown in ``scope``.
    """
    store = state.responses
    lease = state.conversation_lease
    if store is not None:
        body = await with_references_resolved(store, body, scope)
    if body.conversation is not None:
        reservation = _reserve(state, body, scope)
        run_body, turn = await conversation_request(
            state.conversations, body, scope, _holder(reservation), lease=lease
        )
        return Continued(body, run_body, scope, turn, reservation)
    if body.previous_response_id is None or store is None:
        return Continued(body, body, scope, None, _reserve(state, body, scope))
    interrupts = config.supports(GraphFeature.INTERRUPTS)
    continuation = await continued_request(store, body, scope, interrupts=interrupts)
    run_body = continuation.run_body
    reservation = _reserve(state, run_body, scope)
    if continuation.paused is None or state.conversations is None:
        return Continued(body, run_body, scope, None, reservation)
    body, paused_turn = await paused_conversation_turn(
        state.conversations,
        body,
        continuation.paused,
        scope,
        _holder(reservation),
        lease=lease,
    )
    return Continued(body, body, scope, paused_turn, reservation)


def _reserve(
    state: ServeState, body: ResponseCreateRequest, scope: str
) -> Reservation | None:
    """The ids of the background Response ``body`` creates; ``None`` for a
    foreground one."""
    return reserve(state, body, scope) if body.background else None


def _holder(reservation: Reservation | None) -> str:
    """Who claims a Conversation: a background Response, or a foreground
    turn's own token."""
    return reservation.response_id if reservation else new_id("turn")
