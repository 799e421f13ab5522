"""A scripted chat model for tests, demos and benchmarks: the only stand-in
for an LLM that LGOS itself uses.

``ScriptedChatModel`` answers each call with the next scripted reply (or with
what a ``responder`` callable returns), streams it token by token, emits tool
calls as tool-call chunks and reports deterministic usage.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field, PrivateAttr

Reply = AIMessage | str | BaseException
Responder = Callable[[list[BaseMessage]], Reply]
_TOKEN = re.compile(r"\s*\S+|\s+")


def split_tokens(text: str) -> list[str]:
    """Split text into word-sized tokens that concatenate back to ``text``."""
    return _TOKEN.findall(text)


class ScriptedChatModel(BaseChatModel):
    """A chat model whose replies are written by the test.

    ``replies`` are used in order (an exception reply is raised); when they
    run out, ``responder`` (if any) is asked. ``token_delay`` sleeps between
    streamed tokens; ``report_usage=False`` models a provider without usage.
    """

    # Typed loosely so pydantic keeps each reply as written.
    replies: Sequence[Any] = ()
    responder: Callable[..., Any] | None = None
    token_delay: float = 0.0
    report_usage: bool = True
    bound_tools: list[Any] = Field(default_factory=list)
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "lgos-scripted"

    @property
    def calls(self) -> int:
        """How many times the model has been called."""
        return self._calls

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """Accept tools like a real model; replies decide what gets called."""
        return self.model_copy(update={"bound_tools": list(tools)})

    def _next_reply(self, messages: list[BaseMessage]) -> AIMessage:
        index = self._calls
        self._calls += 1
        if index < len(self.replies):
            reply = self.replies[index]
        elif self.responder is not None:
            reply = self.responder(messages)
        else:
            raise RuntimeError(f"ScriptedChatModel has no reply for call {index + 1}")
        if isinstance(reply, BaseException):
            raise reply
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        if self.report_usage and message.usage_metadata is None:
            message = message.model_copy(
                update={"usage_metadata": _usage(messages, message)}
            )
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(
            generations=[ChatGeneration(message=self._next_reply(messages))]
        )

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Native async: LangChain would otherwise run _generate in a thread.
        return self._generate(messages, stop, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in _chunks(self._next_reply(messages)):
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in _chunks(self._next_reply(messages)):
            if self.token_delay:
                await asyncio.sleep(self.token_delay)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def _usage(messages: list[BaseMessage], reply: AIMessage) -> UsageMetadata:
    prompt = sum(len(split_tokens(message.text)) for message in messages)
    completion = max(1, len(split_tokens(reply.text)) + len(reply.tool_calls))
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _chunks(message: AIMessage) -> Iterator[ChatGenerationChunk]:
    """The reply as a token stream whose sum equals ``message``."""
    tokens = split_tokens(message.text) if isinstance(message.content, str) else []
    pieces: list[AIMessageChunk] = [
        AIMessageChunk(content=token, id=message.id) for token in tokens
    ]
    if not isinstance(message.content, str):
        pieces.append(AIMessageChunk(content=message.content, id=message.id))
    for index, call in enumerate(message.tool_calls):
        pieces.append(
            AIMessageChunk(
                content="",
                id=message.id,
                tool_call_chunks=[
                    {
                        "id": call["id"],
                        "name": call["name"],
                        "args": json.dumps(call["args"]),
                        "index": index,
                        "type": "tool_call_chunk",
                    }
                ],
            )
        )
    if not pieces:
        pieces.append(AIMessageChunk(content="", id=message.id))
    last = pieces[-1]
    pieces[-1] = last.model_copy(
        update={
            "usage_metadata": message.usage_metadata,
            "response_metadata": message.response_metadata,
            "additional_kwargs": message.additional_kwargs,
            "chunk_position": "last",
        }
    )
    for piece in pieces:
        yield ChatGenerationChunk(message=piece)
