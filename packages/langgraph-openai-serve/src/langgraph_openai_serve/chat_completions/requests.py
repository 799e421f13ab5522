"""The reference's Chat Completions request side: the route's own decoder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage
from pydantic import TypeAdapter

from langgraph_openai_serve.openai.chat.decode import (
    convert_messages,
    decode_chat_request,
)
from langgraph_openai_serve.openai.chat.schemas import (
    ChatCompletionRequest,
    ChatMessage,
)

ChatCompletionRequestMessage = ChatMessage
"""One message of ``ChatCompletionRequest.messages`` (a tagged union)."""

_MESSAGES: TypeAdapter[list[ChatMessage]] = TypeAdapter(list[ChatMessage])

__all__ = [
    "ChatCompletionRequest",
    "ChatCompletionRequestMessage",
    "convert_to_lc_messages",
    "decode_chat_request",
]


def convert_to_lc_messages(
    messages: Sequence[ChatMessage | Mapping[str, Any]],
) -> list[BaseMessage]:
    """Chat request messages (models or their JSON dicts) as LangChain messages.

    File parts become LangChain file blocks, as ``decode_chat_request`` makes
    them.

    Raises:
        pydantic.ValidationError: a dict is not a supported Chat message.
        InvalidRequestError: the conversation is not valid (a tool message
            answering no open tool call, tool arguments that are not a JSON
            object); ``param`` names the message.
    """
    return convert_messages(_MESSAGES.validate_python(list(messages)))
