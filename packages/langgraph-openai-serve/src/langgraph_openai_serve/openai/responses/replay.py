"""Replayed Responses items -> LangChain messages, validated first.

Every function or custom call needs exactly one output of its own type, and
every output must answer an earlier call; violations are 400s naming the
item, raised before the graph runs. Reasoning items (status updates shown
as reasoning summaries) are left out. Assistant output messages keep their id,
``phase``, refusals and citations in LangChain content blocks (the shape
``langchain-openai`` uses), so model adapters can send them back unchanged.
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
from langgraph_openai_serve.openai.responses import schemas

_CALLS = (schemas.FunctionCall, schemas.CustomToolCall)
_OUTPUTS: dict[type[Any], type[Any]] = {
    schemas.FunctionCallOutput: schemas.FunctionCall,
    schemas.CustomToolCallOutput: schemas.CustomToolCall,
}


def replay_messages(items: list[Any], *, file_inputs: bool) -> list[BaseMessage]:
    """Validate the call/output pairs of ``items`` and convert them.

    Raises:
        InvalidRequestError: missing, duplicate, mismatched or unmatched
            results, or content the model does not accept.
    """
    check_pairs(items)
    messages: list[BaseMessage] = []
    for index, item in enumerate(items):
        if isinstance(item, schemas.Message):
            messages.append(_message(item, index, file_inputs=file_inputs))
        elif isinstance(item, schemas.FunctionCall):
            _attach_call(messages, item.call_id, item.name, _arguments(item, index))
        elif isinstance(item, schemas.CustomToolCall):
            _attach_call(messages, item.call_id, item.name, {"__arg1": item.input})
        elif isinstance(item, schemas.WebSearchCall):
            _attach_block(messages, item.model_dump(exclude_none=True))
        elif isinstance(item, schemas.Reasoning):
            continue  # status updates shown as reasoning: not conversation
        elif isinstance(item, schemas.FunctionCallOutput):
            messages.append(
                ToolMessage(
                    content=item.output, tool_call_id=item.call_id, name=item.name
                )
            )
        else:
            messages.append(ToolMessage(content=item.output, tool_call_id=item.call_id))
    return messages


def check_pairs(items: list[Any]) -> None:
    """Each call answered exactly once, by an output of its own type."""
    calls: dict[str, tuple[int, type]] = {}
    answered: set[str] = set()
    for index, item in enumerate(items):
        if isinstance(item, _CALLS):
            if item.call_id in calls:
                raise InvalidRequestError(
                    f"Duplicate call id '{item.call_id}'.",
                    param=f"input[{index}].call_id",
                )
            calls[item.call_id] = (index, type(item))
        elif type(item) in _OUTPUTS:
            param = f"input[{index}].call_id"
            if item.call_id not in calls:
                raise InvalidRequestError(
                    f"No call with call_id '{item.call_id}' precedes this output.",
                    param=param,
                )
            if calls[item.call_id][1] is not _OUTPUTS[type(item)]:
                raise InvalidRequestError(
                    f"Call '{item.call_id}' is answered by an output of another type.",
                    param=param,
                )
            if item.call_id in answered:
                raise InvalidRequestError(
                    f"Call '{item.call_id}' already has an output.", param=param
                )
            answered.add(item.call_id)
    for call_id, (index, _) in calls.items():
        if call_id not in answered:
            raise InvalidRequestError(
                f"Call '{call_id}' has no matching output; execute it and append "
                "its output before continuing.",
                param=f"input[{index}]",
            )


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
        param = f"input[{index}].content[{position}]"
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
                param=f"input[{index}].content[{position}].type",
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


def _arguments(item: schemas.FunctionCall, index: int) -> dict[str, Any]:
    try:
        args = json.loads(item.arguments or "{}")
    except ValueError:
        args = None
    if not isinstance(args, dict):
        raise InvalidRequestError(
            "Function call arguments must be a JSON object.",
            param=f"input[{index}].arguments",
        )
    return args


def _last_ai(messages: list[BaseMessage]) -> AIMessage:
    # Consecutive items after an assistant message belong to that turn, as
    # LangChain represents one model reply with several tool calls.
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage):
        return last
    message = AIMessage(content=[])
    messages.append(message)
    return message


def _attach_call(
    messages: list[BaseMessage], call_id: str, name: str, args: dict[str, Any]
) -> None:
    message = _last_ai(messages)
    call = {"id": call_id, "name": name, "args": args, "type": "tool_call"}
    message.tool_calls = [*message.tool_calls, call]  # type: ignore[list-item]


def _attach_block(messages: list[BaseMessage], block: dict[str, Any]) -> None:
    message = _last_ai(messages)
    content = (
        message.content
        if isinstance(message.content, list)
        else ([{"type": "text", "text": message.content}] if message.content else [])
    )
    message.content = [*content, block]
