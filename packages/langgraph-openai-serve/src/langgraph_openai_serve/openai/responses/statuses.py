"""How a streamed Response shows a graph's status updates.

By default each visible status is an assistant message with
``phase="commentary"`` (the contract every LGOS client reads). Clients that
ignore ``phase`` join those messages to the answer, so a status can be a
reasoning summary item instead, which every mainstream client shows apart
from the answer (the Vercel AI SDK as ``reasoning``, LangChain.js as a
reasoning block, the ``openai`` SDKs as ``reasoning`` items). Who chooses,
first to last:

1. the request's ``metadata.lgos_status``: ``"reasoning"`` or
   ``"commentary"``;
2. the request's ``reasoning.summary`` (any value): reasoning;
3. the deployment (``LGOS_RESPONSES_STATUS_AS_REASONING``).

The deployment's choice is written into the request (as
``reasoning.summary: "auto"``) when the route receives it, so a background
run and the Response object carry the same choice; nothing here runs when
the deployment keeps the default and the request says nothing.
"""

from __future__ import annotations

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.schemas import (
    ReasoningOptions,
    ResponseCreateRequest,
)

STATUS_KEY = "lgos_status"
_CHOICES = frozenset({"reasoning", "commentary"})
DEFAULT_SUMMARY = "auto"


def chosen(body: ResponseCreateRequest, as_reasoning: bool) -> ResponseCreateRequest:
    """``body`` with the deployment's choice (``as_reasoning``) applied
    when the request makes none.

    Raises:
        InvalidRequestError: (``metadata.lgos_status``) neither
            ``"reasoning"`` nor ``"commentary"``.
    """
    choice = body.metadata.get(STATUS_KEY) if body.metadata else None
    if choice is not None and choice not in _CHOICES:
        raise InvalidRequestError(
            f"Invalid value for 'metadata.{STATUS_KEY}': '{choice}'; use "
            "'reasoning' or 'commentary'.",
            param=f"metadata.{STATUS_KEY}",
        )
    if not as_reasoning or choice is not None or _summary(body) is not None:
        return body
    reasoning = ReasoningOptions(summary=DEFAULT_SUMMARY)
    return body.model_copy(update={"reasoning": reasoning})


def reasoning_summary(body: ResponseCreateRequest) -> str | None:
    """The ``reasoning.summary`` the Response shows when its statuses are
    reasoning summaries; ``None`` when they are commentary."""
    choice = body.metadata.get(STATUS_KEY) if body.metadata else None
    if choice == "commentary":
        return None
    summary = _summary(body)
    if choice == "reasoning":
        return summary or DEFAULT_SUMMARY
    return summary


def _summary(body: ResponseCreateRequest) -> str | None:
    return body.reasoning.summary if body.reasoning is not None else None
