"""Responses request -> ``GraphRequest`` and LangChain messages."""

from __future__ import annotations

from collections.abc import Set

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.openai.generation import NONE, Generation
from langgraph_openai_serve.openai.responses import schemas
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    interrupt_id_from_call_id,
)
from langgraph_openai_serve.openai.responses.pause import INTERRUPT_TOOL_NAME
from langgraph_openai_serve.openai.responses.references import WITHOUT_STORE
from langgraph_openai_serve.openai.responses.replay import replay_messages
from langgraph_openai_serve.openai.responses.tools import select_tools


def decode_response_request(
    body: schemas.ResponseCreateRequest,
    *,
    file_inputs: bool,
    server_tools: Set[str] = frozenset(),
    approval_label: str | None = None,
    generation: Generation = NONE,
    scope: str | None = None,
) -> tuple[GraphRequest, list[BaseMessage]]:
    """Normalize one validated request for the graph layer (``generation``:
    its controls, checked against the graph by ``generation.py``).

    Raises:
        InvalidRequestError: a tool selection the model does not offer, an
            inconsistent replayed exchange, or files for a graph without
            ``FILE_INPUTS``.
    """
    request = graph_request_of(body, server_tools, approval_label, generation, scope)
    messages: list[BaseMessage] = []
    if body.instructions:
        messages.append(SystemMessage(content=body.instructions))
    if isinstance(body.input, str):
        messages.append(HumanMessage(content=body.input))
    else:
        for index, item in enumerate(body.input):
            if isinstance(item, schemas.McpApprovalResponse):
                raise InvalidRequestError(
                    "An mcp_approval_response answers a paused run; send it with "
                    "that Response's previous_response_id.",
                    param=f"input[{index}]",
                )
            if isinstance(item, schemas.ItemReference):
                # With a store, ``continuation.py`` replaced it already.
                raise InvalidRequestError(WITHOUT_STORE, param=f"input[{index}]")
        messages.extend(replay_messages(body.input, file_inputs=file_inputs))
    return request, messages


def decode_resume(
    body: schemas.ResponseCreateRequest,
    *,
    server_tools: Set[str] = frozenset(),
    generation: Generation = NONE,
    scope: str | None = None,
) -> tuple[GraphRequest, dict[str, str]]:
    """A resume: ``previous_response_id`` plus only ``function_call_output``
    items answering ``lgos_interrupt`` calls. Returns answers by interrupt id.

    Raises:
        InvalidRequestError: new instructions, other items, or call ids that
            are not interrupt calls or repeat.
    """
    if body.instructions is not None:
        raise InvalidRequestError(
            "A resume continues the paused run; new instructions are not allowed.",
            param="instructions",
        )
    items = body.input if isinstance(body.input, list) else None
    if not items:
        raise InvalidRequestError(
            "A resume sends the function_call_output items answering the pause.",
            param="input",
        )
    answers: dict[str, str] = {}
    for index, item in enumerate(items):
        if not isinstance(item, schemas.FunctionCallOutput):
            raise InvalidRequestError(
                "A resume may only contain function_call_output items.",
                param=f"input[{index}]",
            )
        interrupt_id = interrupt_id_from_call_id(item.call_id)
        if interrupt_id is None or interrupt_id in answers:
            raise InvalidRequestError(
                f"'{item.call_id}' is not an unanswered lgos_interrupt call id.",
                param=f"input[{index}].call_id",
            )
        answers[interrupt_id] = item.output
    return graph_request_of(
        body, server_tools, generation=generation, scope=scope
    ), answers


def ends_with_interrupt_answers(body: schemas.ResponseCreateRequest) -> bool:
    """Whether the input ends like a resume (interrupt calls or answers)."""
    if not isinstance(body.input, list) or not body.input:
        return False
    last = body.input[-1]
    if isinstance(last, schemas.McpApprovalResponse):
        return True
    if isinstance(last, schemas.FunctionCallOutput):
        return interrupt_id_from_call_id(last.call_id) is not None
    return isinstance(last, schemas.FunctionCall) and last.name == INTERRUPT_TOOL_NAME


def graph_request_of(
    body: schemas.ResponseCreateRequest,
    server_tools: Set[str],
    approval_label: str | None = None,
    generation: Generation = NONE,
    scope: str | None = None,
) -> GraphRequest:
    """The protocol-neutral request, with tools checked against the graph
    (``scope``: the tenant it runs for, when the caller knows it already)."""
    tools = select_tools(body, server_tools, approval_label)
    return GraphRequest(
        model=body.model,
        metadata=body.metadata or {},
        user=body.user,
        tools=tools.functions,
        tool_choice=tools.tool_choice,
        parallel_tool_calls=body.parallel_tool_calls,
        server_tools=tools.server_tools,
        generation=generation.options,
        output_schema=generation.output_schema,
        scope=scope,
    )
