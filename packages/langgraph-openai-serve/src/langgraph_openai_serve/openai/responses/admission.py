"""A create request's admission: what the server refuses before anything
is read, claimed or run.

Each rule names the parameter the client got wrong: ``store`` on a server
that keeps nothing, ``previous_response_id`` where it continues nothing,
answers to a pause without it, ``background`` for a graph that does not run
in the background.
"""

from __future__ import annotations

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.openai.responses.decode import ends_with_interrupt_answers
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.state import ServeState


def admit(state: ServeState, body: ResponseCreateRequest) -> GraphConfig:
    """The graph ``body`` runs, once the request is one the server takes.

    Raises:
        InvalidRequestError: a parameter the server cannot honour.
        GraphNotFoundError: no graph is registered as ``body.model``.
    """
    store = state.responses
    if body.store and store is None:
        raise InvalidRequestError(
            "This server does not keep responses; omit 'store' or set it to false.",
            param="store",
        )
    config = state.registry.get_graph(body.model)
    interrupts = config.supports(GraphFeature.INTERRUPTS)
    resuming = body.previous_response_id is not None
    if resuming and not interrupts and store is None and body.conversation is None:
        raise InvalidRequestError(
            "previous_response_id only resumes a paused interrupt run; continue an "
            "ordinary conversation by replaying the previous output items.",
            param="previous_response_id",
        )
    if interrupts and not resuming and ends_with_interrupt_answers(body):
        raise InvalidRequestError(
            "Answers to a paused run must be sent with its previous_response_id.",
            param="previous_response_id",
        )
    if body.background:
        _admit_background(state, config, body)
    return config


def _admit_background(
    state: ServeState, config: GraphConfig, body: ResponseCreateRequest
) -> None:
    if not config.supports(GraphFeature.BACKGROUND):
        raise InvalidRequestError(
            f"Model '{body.model}' does not support background responses.",
            param="background",
        )
    if state.responses is not None and body.store is False:
        raise InvalidRequestError(
            "A background response is kept until it expires; omit 'store' or "
            "set it to true.",
            param="store",
        )
    if state.background is None:
        raise InvalidRequestError(
            "Background responses are not enabled.", param="background"
        )
