"""Chat Completions request -> ``GraphRequest`` and LangChain messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langgraph_openai_serve.graph.config import GraphConfig
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.graph.features import GraphFeature
from langgraph_openai_serve.graph.request import (
    ClientFunctionTool,
    GraphRequest,
    NamedFunctionToolChoice,
    ToolChoice,
)
from langgraph_openai_serve.openai.chat import schemas
from langgraph_openai_serve.openai.generation import NONE, Generation


def check_graph_serves_chat(
    config: GraphConfig, body: schemas.ChatCompletionRequest
) -> None:
    """Refuse what only Responses offers: interrupt graphs, server tools.

    Raises:
        InvalidRequestError: naming ``model`` or the offending tool.
    """
    if config.supports(GraphFeature.INTERRUPTS):
        raise InvalidRequestError(
            f"Model '{body.model}' uses interrupts, which only the Responses API "
            "(/v1/responses) supports.",
            param="model",
        )
    for index, tool in enumerate(body.tools or ()):
        if tool.function.name in config.server_tools:
            raise InvalidRequestError(
                f"'{tool.function.name}' is a server tool of this model; only the "
                "Responses API can select server tools.",
                param=f"tools[{index}].function.name",
            )


def decode_chat_request(
    body: schemas.ChatCompletionRequest,
    *,
    file_inputs: bool = True,
    generation: Generation = NONE,
    scope: str | None = None,
) -> tuple[GraphRequest, list[BaseMessage]]:
    """Normalize one validated request for the graph layer.

    File parts become LangChain file blocks; the route passes
    ``file_inputs=False`` for a graph without ``GraphFeature.FILE_INPUTS``,
    and ``generation`` checked against the graph (``chat/generation.py``).

    Raises:
        InvalidRequestError: the messages are well-formed JSON but not a valid
            conversation (bad tool-call arguments, unanswered tool results), or
            files are sent to a graph that does not declare ``FILE_INPUTS``.
    """
    request = GraphRequest(
        model=body.model,
        metadata=body.metadata or {},
        user=body.user,
        tools=tuple(
            ClientFunctionTool(
                name=tool.function.name,
                description=tool.function.description,
                parameters=tool.function.parameters,
                strict=tool.function.strict,
            )
            for tool in body.tools or ()
        ),
        tool_choice=_tool_choice(body.tool_choice),
        parallel_tool_calls=body.parallel_tool_calls,
        generation=generation.options,
        scope=scope,
        output_schema=generation.output_schema,
    )
    return request, convert_messages(body.messages, file_inputs=file_inputs)


def _tool_choice(
    choice: str | schemas.NamedToolChoice | None,
) -> ToolChoice:
    if isinstance(choice, schemas.NamedToolChoice):
        return NamedFunctionToolChoice(choice.function.name)
    return choice  # type: ignore[return-value]


def convert_messages(
    messages: Sequence[schemas.ChatMessage], *, file_inputs: bool = True
) -> list[BaseMessage]:
    """Validated Chat messages as LangChain messages.

    Raises:
        InvalidRequestError: the conversation is not valid (see
            ``decode_chat_request``).
    """
    converted: list[BaseMessage] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        match message:
            case schemas.SystemMessage():
                converted.append(
                    SystemMessage(
                        content=_text_content(message.content), name=message.name
                    )
                )
            case schemas.DeveloperMessage():
                converted.append(
                    SystemMessage(
                        content=_text_content(message.content),
                        name=message.name,
                        additional_kwargs={"__openai_role__": "developer"},
                    )
                )
            case schemas.UserMessage():
                content = _user_content(message.content, index, file_inputs)
                converted.append(HumanMessage(content=content, name=message.name))
            case schemas.AssistantMessage():
                ai = _assistant(message, index)
                open_calls = {call["id"] for call in ai.tool_calls if call["id"]}
                converted.append(ai)
            case schemas.ToolMessage():
                if message.tool_call_id not in open_calls:
                    raise InvalidRequestError(
                        "Messages with role 'tool' must answer a tool call of the "
                        "preceding assistant message, once each.",
                        param=f"messages[{index}].tool_call_id",
                    )
                open_calls.discard(message.tool_call_id)
                converted.append(
                    ToolMessage(
                        content=_text_content(message.content),
                        tool_call_id=message.tool_call_id,
                        name=message.name,
                    )
                )
    return converted


def _text_content(content: str | list[schemas.TextPart]) -> Any:
    if isinstance(content, str):
        return content
    return [{"type": "text", "text": part.text} for part in content]


def _user_content(content: str | list[Any], index: int, file_inputs: bool) -> Any:
    if isinstance(content, str):
        return content
    blocks: list[dict[str, Any]] = []
    for position, part in enumerate(content):
        if isinstance(part, schemas.TextPart):
            blocks.append({"type": "text", "text": part.text})
        elif not file_inputs:
            raise InvalidRequestError(
                "This model does not accept file inputs.",
                param=f"messages[{index}].content[{position}]",
            )
        else:
            blocks.append({"type": "file", "file_id": part.file.file_id})
    return blocks


def _assistant(message: schemas.AssistantMessage, index: int) -> AIMessage:
    texts: list[str] = []
    refusals: list[str] = [message.refusal] if message.refusal else []
    if isinstance(message.content, str):
        texts.append(message.content)
    else:
        for part in message.content or ():
            if isinstance(part, schemas.TextPart):
                texts.append(part.text)
            else:
                refusals.append(part.refusal)
    tool_calls = []
    for position, call in enumerate(message.tool_calls or ()):
        param = f"messages[{index}].tool_calls[{position}].function.arguments"
        try:
            args = json.loads(call.function.arguments or "{}")
        except ValueError:
            raise InvalidRequestError(
                "Tool call arguments must be a JSON object.", param=param
            ) from None
        if not isinstance(args, dict):
            raise InvalidRequestError(
                "Tool call arguments must be a JSON object.", param=param
            )
        tool_calls.append(
            {
                "id": call.id,
                "name": call.function.name,
                "args": args,
                "type": "tool_call",
            }
        )
    extra = {"refusal": "".join(refusals)} if refusals else {}
    return AIMessage(
        content="".join(texts),
        name=message.name,
        tool_calls=tool_calls,
        additional_kwargs=extra,
    )
