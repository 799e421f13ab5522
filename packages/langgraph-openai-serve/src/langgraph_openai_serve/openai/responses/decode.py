"""Responses request -> ``GraphRequest`` and LangChain messages."""

from __future__ import annotations

from collections.abc import Set

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_openai_serve.graph.request import GraphRequest
from langgraph_openai_serve.openai.responses import schemas
from langgraph_openai_serve.openai.responses.replay import replay_messages
from langgraph_openai_serve.openai.responses.tools import select_tools


def decode_response_request(
    body: schemas.ResponseCreateRequest,
    *,
    file_inputs: bool,
    server_tools: Set[str] = frozenset(),
) -> tuple[GraphRequest, list[BaseMessage]]:
    """Normalize one validated request for the graph layer.

    Raises:
        InvalidRequestError: a tool selection the model does not offer, an
            inconsistent replayed exchange, or files for a graph without
            ``FILE_INPUTS``.
    """
    tools = select_tools(body, server_tools)
    request = GraphRequest(
        model=body.model,
        metadata=body.metadata or {},
        user=body.user,
        tools=tools.functions,
        tool_choice=tools.tool_choice,
        parallel_tool_calls=body.parallel_tool_calls,
        server_tools=tools.server_tools,
    )
    messages: list[BaseMessage] = []
    if body.instructions:
        messages.append(SystemMessage(content=body.instructions))
    if isinstance(body.input, str):
        messages.append(HumanMessage(content=body.input))
    else:
        messages.extend(replay_messages(body.input, file_inputs=file_inputs))
    return request, messages
