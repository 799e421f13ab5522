"""Responses request -> ``GraphRequest`` and LangChain messages.

Replayed items are validated before the graph runs: every function call
needs exactly one matching output, and outputs must answer an earlier call.
Assistant output messages keep their id, ``phase``, refusals and citations in
LangChain content blocks (the shape ``langchain-openai`` uses), so model
adapters can send them back to a provider unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.request import (
    ClientFunctionTool,
    GraphRequest,
    NamedFunctionToolChoice,
    ToolChoice,
)
from langgraph_openai_serve.openai.responses import schemas


def decode_response_request(
    body: schemas.ResponseCreateRequest, *, file_inputs: bool
) -> tuple[GraphRequest, list[BaseMessage]]:
    """Normalize one validated request for the graph layer.

    Raises:
        InvalidRequestError: a replayed exchange is inconsistent, or files are
            sent to a graph that does not accept them.
    """
    request = GraphRequest(
        model=body.model,
        metadata=body.metadata or {},
        user=body.user,
        tools=tuple(
            ClientFunctionTool(
                name=tool.name,
                description=tool.description,
                parameters=tool.parameters,
                strict=tool.strict,
            )
            for tool in body.tools or ()
        ),
        tool_choice=_tool_choice(body.tool_choice),
        parallel_tool_calls=body.parallel_tool_calls,
    )
    messages: list[BaseMessage] = []
    if body.instructions:
        messages.append(SystemMessage(content=body.instructions))
    if isinstance(body.input, str):
        messages.append(HumanMessage(content=body.input))
    else:
        _check_pairs(body.input)
        messages.extend(_items(body.input, file_inputs=file_inputs))
    return request, messages


def _tool_choice(choice: str | schemas.NamedFunctionChoice | None) -> ToolChoice:
    if isinstance(choice, schemas.NamedFunctionChoice):
        return NamedFunctionToolChoice(choice.name)
    return choice  # type: ignore[return-value]


def _check_pairs(items: list[Any]) -> None:
    """Each call answered exactly once, each output answering an earlier call."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for index, item in enumerate(items):
        if isinstance(item, schemas.FunctionCall):
            if item.call_id in calls:
                raise InvalidRequestError(
                    f"Duplicate function call id '{item.call_id}'.",
                    param=f"input.[{index}].call_id",
                )
            calls[item.call_id] = index
        elif isinstance(item, schemas.FunctionCallOutput):
            if item.call_id not in calls:
                raise InvalidRequestError(
                    f"No function call with call_id '{item.call_id}' precedes this "
                    "output.",
                    param=f"input.[{index}].call_id",
                )
            if item.call_id in answered:
                raise InvalidRequestError(
                    f"Function call '{item.call_id}' already has an output.",
                    param=f"input.[{index}].call_id",
                )
            answered.add(item.call_id)
    for call_id, index in calls.items():
        if call_id not in answered:
            raise InvalidRequestError(
                f"Function call '{call_id}' has no matching function_call_output; "
                "execute it and append its output before continuing.",
                param=f"input.[{index}]",
            )


def _items(items: list[Any], *, file_inputs: bool) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for index, item in enumerate(items):
        if isinstance(item, schemas.Message):
            messages.append(_message(item, index, file_inputs=file_inputs))
        elif isinstance(item, schemas.FunctionCall):
            _attach_call(messages, item, index)
        else:
            messages.append(ToolMessage(content=item.output, tool_call_id=item.call_id))
    return messages


def _message(item: schemas.Message, index: int, *, file_inputs: bool) -> BaseMessage:
    if item.role == "assistant":
        return _assistant(item, index)
    content = _input_content(item, index, file_inputs=file_inputs)
    if item.role == "user":
        return HumanMessage(content=content)
    extra = {"__openai_role__": "developer"} if item.role == "developer" else {}
    return SystemMessage(content=content, additional_kwargs=extra)


def _input_content(item: schemas.Message, index: int, *, file_inputs: bool) -> Any:
    if isinstance(item.content, str):
        return item.content
    blocks: list[dict[str, Any]] = []
    for position, part in enumerate(item.content):
        param = f"input.[{index}].content.[{position}]"
        if isinstance(part, schemas.InputText):
            blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, schemas.InputFile):
            if item.role != "user":
                raise InvalidRequestError(
                    "Files may only be sent in user messages.", param=param
                )
            if not file_inputs:
                raise InvalidRequestError(
                    "This model does not accept file inputs.", param=param
                )
            blocks.append({"type": "file", "file_id": part.file_id})
        else:
            raise InvalidRequestError(
                f"'{part.type}' content belongs to assistant messages.",
                param=f"{param}.type",
            )
    return blocks


def _assistant(item: schemas.Message, index: int) -> AIMessage:
    if isinstance(item.content, str):
        return AIMessage(content=item.content, id=item.id)
    blocks: list[str | dict[Any, Any]] = []
    for position, part in enumerate(item.content):
        block: dict[str, Any]
        if isinstance(part, schemas.OutputText):
            block = {
                "type": "text",
                "text": part.text,
                "annotations": [_citation(a, part.text) for a in part.annotations],
            }
        elif isinstance(part, schemas.Refusal):
            block = {"type": "refusal", "refusal": part.refusal}
        else:
            raise InvalidRequestError(
                "Assistant messages carry output_text or refusal content.",
                param=f"input.[{index}].content.[{position}].type",
            )
        if item.id:
            block["id"] = item.id
        if item.phase:
            block["phase"] = item.phase
        blocks.append(block)
    return AIMessage(content=blocks, id=item.id)


def _citation(annotation: schemas.UrlCitation, text: str) -> dict[str, Any]:
    citation: dict[str, Any] = {
        "type": "citation",
        "url": annotation.url,
        "title": annotation.title,
        "start_index": annotation.start_index,
        "end_index": annotation.end_index,
    }
    span = text[annotation.start_index : annotation.end_index + 1]
    if span:
        citation["cited_text"] = span
    return citation


def _attach_call(
    messages: list[BaseMessage], item: schemas.FunctionCall, index: int
) -> None:
    try:
        args = json.loads(item.arguments or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise InvalidRequestError(
            "Function call arguments must be a JSON object.",
            param=f"input.[{index}].arguments",
        )
    call = {"id": item.call_id, "name": item.name, "args": args, "type": "tool_call"}
    last = messages[-1] if messages else None
    # Consecutive calls after an assistant message belong to that turn, as
    # LangChain represents one model reply with several tool calls.
    if isinstance(last, AIMessage):
        last.tool_calls = [*last.tool_calls, call]  # type: ignore[list-item]
    else:
        messages.append(AIMessage(content="", tool_calls=[call]))
