"""The reference's Chat Completions builders, over the server's own encoder.

Every function here renders through ``openai.chat.encode`` (the encoder the
``/chat/completions`` route uses), so what they build is byte for byte what
the server sends; the results come back as the official ``openai`` SDK types
the reference names. The stream builder wraps one ``ChatStreamEncoder``
built with it, so a text delta costs what it costs the route, plus decoding
the frame to ``str``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.messages.ai import UsageMetadata
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionMessage,
    ChatCompletionMessageFunctionToolCall,
)
from openai.types.chat.chat_completion_message import Annotation

from langgraph_openai_serve.graph.answer import Answer
from langgraph_openai_serve.graph.citations import citations_from_message
from langgraph_openai_serve.graph.usage import usage_from_metadata
from langgraph_openai_serve.openai.chat.encode import (
    ChatStreamEncoder,
    annotations_body,
    completion_body,
    finish_reason,
    message_body,
    tool_calls_body,
    usage_body,
)
from langgraph_openai_serve.openai.sse import DONE_FRAME
from langgraph_openai_serve.openai.stream_failure import StreamFailure

_DONE = DONE_FRAME.decode()


class ChatCompletionStreamResponseBuilder:
    """The SSE frames of one ``chat.completion.chunk`` stream, as ``str``.

    ``response_id`` and ``created`` are fixed at construction and shared by
    every chunk. ``usage`` emits its chunk whenever called; callers check
    ``include_usage`` first, as the route does.
    """

    def __init__(self, model: str, *, include_usage: bool = False) -> None:
        self._encoder = ChatStreamEncoder(model, include_usage=include_usage)
        self.response_id = self._encoder.completion_id
        self.created = self._encoder.created
        self.model = model
        self.include_usage = include_usage

    def role(self) -> str:
        """The first chunk: the assistant role."""
        return self._encoder.start().decode()

    def text(self, content: str) -> str:
        """One text delta."""
        return self._encoder.text(content).decode()

    def tool_calls(self, message: AIMessage) -> str:
        """Every tool call of the final message in one delta."""
        calls = Answer.from_message(message).tool_calls
        return self._encoder.tool_calls(calls).decode()

    def finish(
        self,
        finish_reason: Literal["stop", "tool_calls"],
        *,
        annotations: Sequence[Annotation | dict[str, Any]] | None = None,
    ) -> str:
        """The chunk carrying ``finish_reason``; ``annotations`` ride on its
        delta (LGOS's compatibility extension for streamed citations)."""
        bodies = [
            item.model_dump(mode="json", exclude_none=True)
            if isinstance(item, Annotation)
            else item
            for item in annotations or ()
        ]
        return self._encoder.final(finish_reason, bodies or None).decode()

    def error(self, message: str) -> str:
        """An error chunk (``type`` and ``code`` ``server_error``); send
        ``done()`` after it."""
        failure = StreamFailure("server_error", message)
        return self._encoder.error_chunk(failure).decode()

    @staticmethod
    def done() -> str:
        """The ``data: [DONE]`` frame that ends every stream."""
        return _DONE

    def usage(self, usage: UsageMetadata) -> str:
        """The usage-only chunk (empty ``choices``)."""
        return self._encoder.usage(usage_from_metadata(usage)).decode()


def chat_completion_response(*, model: str, message: AIMessage) -> ChatCompletion:
    """The non-streaming ``chat.completion`` for a final message."""
    usage = message.usage_metadata
    body = completion_body(
        model,
        Answer.from_message(message),
        usage_from_metadata(usage) if usage is not None else None,
    )
    return ChatCompletion.model_validate(body)


def response_message(
    message: AIMessage,
) -> tuple[ChatCompletionMessage, Literal["stop", "tool_calls"]]:
    """The assistant message and its ``finish_reason``.

    The reason is ``"length"`` or ``"content_filter"`` when the model stopped
    for that reason, as in the server's responses.
    """
    answer = Answer.from_message(message)
    reason: Any = finish_reason(answer)
    return ChatCompletionMessage.model_validate(message_body(answer)), reason


def tool_calls_from_message(
    message: AIMessage,
) -> list[ChatCompletionMessageFunctionToolCall]:
    """The final message's tool calls as Chat ``function`` tool calls.

    Raises:
        GraphError: a tool call has no id.
    """
    calls = Answer.from_message(message).tool_calls
    return [
        ChatCompletionMessageFunctionToolCall.model_validate(call)
        for call in tool_calls_body(calls)
    ]


def usage_info(usage: UsageMetadata | None) -> CompletionUsage | None:
    """LangChain's provider-reported usage as Chat usage (``None`` stays)."""
    if usage is None:
        return None
    return CompletionUsage.model_validate(usage_body(usage_from_metadata(usage)))


def annotations_from_message(message: AIMessage) -> list[Annotation]:
    """The message's LangChain citations as Chat ``url_citation`` annotations,
    offset into the final text."""
    bodies = annotations_body(citations_from_message(message))
    return [Annotation.model_validate(body) for body in bodies]
