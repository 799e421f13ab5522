"""Run events -> Chat Completions objects and SSE chunks.

A streaming encoder shapes its chunk envelope once per stream and splices
each escaped text delta between two pre-built byte strings, so a token costs
one ``json.dumps`` of the delta and no model construction.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from langgraph_openai_serve.compact_json import dumps
from langgraph_openai_serve.error_envelope import error_body
from langgraph_openai_serve.graph.answer import Answer, ToolCall
from langgraph_openai_serve.graph.citations import Citation
from langgraph_openai_serve.graph.completion import watch_end
from langgraph_openai_serve.graph.events import RunCompleted, RunEvent, TextDelta
from langgraph_openai_serve.graph.status import StatusUpdate
from langgraph_openai_serve.graph.usage import Usage
from langgraph_openai_serve.ids import random_hex
from langgraph_openai_serve.observability.runs import NO_WATCH, RunWatch
from langgraph_openai_serve.openai.context import RequestLog
from langgraph_openai_serve.openai.sse import DONE_FRAME, data_frame
from langgraph_openai_serve.openai.stream_failure import (
    INTERNAL_FAILURE,
    StreamFailure,
    run_deadline,
    stream_failure,
)

_FINISH_REASONS = {"length": "length", "content_filter": "content_filter"}


def new_completion_id() -> str:
    return f"chatcmpl-{random_hex()}"


def finish_reason(answer: Answer) -> str:
    """Chat's finish_reason for an answer."""
    if answer.stop in _FINISH_REASONS:
        return _FINISH_REASONS[answer.stop]
    return "tool_calls" if answer.tool_calls else "stop"


def usage_body(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def annotations_body(citations: Sequence[Citation]) -> list[dict[str, Any]]:
    """Chat ``url_citation`` annotations for an answer's citations."""
    return [
        {
            "type": "url_citation",
            "url_citation": {
                "url": citation.url,
                "title": citation.title,
                "start_index": citation.start_index,
                "end_index": citation.end_index,
            },
        }
        for citation in citations
    ]


def tool_calls_body(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """Chat ``function`` tool calls for an answer's complete calls."""
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for call in calls
    ]


def message_body(answer: Answer) -> dict[str, Any]:
    """The assistant ``message`` of a complete ``chat.completion``."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": answer.text or (None if answer.tool_calls or answer.refusal else ""),
        "refusal": answer.refusal,
    }
    if answer.citations:
        message["annotations"] = annotations_body(answer.citations)
    if answer.tool_calls:
        message["tool_calls"] = tool_calls_body(answer.tool_calls)
    return message


def completion_body(
    model: str,
    answer: Answer,
    usage: Usage | None,
    completion_id: str | None = None,
) -> dict[str, Any]:
    """A complete ``chat.completion`` object."""
    body: dict[str, Any] = {
        "id": completion_id or new_completion_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message_body(answer),
                "finish_reason": finish_reason(answer),
                "logprobs": None,
            }
        ],
    }
    if usage is not None:
        body["usage"] = usage_body(usage)
    return body


class ChatStreamEncoder:
    """Per-stream state and the frames of one ``chat.completion.chunk`` stream.

    One method per frame kind; ``finish`` and ``error`` compose them into the
    frames that end a stream.
    """

    def __init__(
        self, model: str, *, include_usage: bool, completion_id: str | None = None
    ) -> None:
        self.include_usage = include_usage
        self.model = model
        self.completion_id = completion_id or new_completion_id()
        self.created = int(time.time())
        head = dumps(
            {
                "id": self.completion_id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": model,
            }
        )[:-1]
        self._head = head
        self._text_prefix = (
            f'data: {head},"choices":[{{"index":0,"delta":{{"content":'.encode()
        )
        self._text_suffix = b'},"finish_reason":null}]}\n\n'

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return data_frame(f'{self._head},"choices":[{dumps(choice)}]}}')

    def start(self) -> bytes:
        """The first chunk, announcing the assistant role."""
        return self._chunk({"role": "assistant", "content": ""})

    def reasoning(self, status: StatusUpdate) -> bytes:
        """A visible status as a ``reasoning_content`` delta (opt-in; an
        extension Open WebUI renders as its reasoning block)."""
        if status.hidden or not status.description:
            return b""
        return self._chunk({"reasoning_content": status.description + "\n"})

    def text(self, text: str) -> bytes:
        """One answer text delta."""
        return self._text_prefix + json.dumps(text).encode() + self._text_suffix

    def refusal(self, refusal: str) -> bytes:
        """The answer's refusal as one delta."""
        return self._chunk({"refusal": refusal})

    def tool_calls(self, calls: Sequence[ToolCall]) -> bytes:
        """Every complete tool call of the answer in one delta."""
        indexed = [
            {"index": index, **call}
            for index, call in enumerate(tool_calls_body(calls))
        ]
        return self._chunk({"tool_calls": indexed})

    def final(
        self, reason: str, annotations: list[dict[str, Any]] | None = None
    ) -> bytes:
        """The chunk carrying ``finish_reason`` (and the answer's citations)."""
        # Compatibility extension: the published delta has no annotations.
        delta = {"annotations": annotations} if annotations else {}
        return self._chunk(delta, reason)

    def usage(self, usage: Usage) -> bytes:
        """The usage-only chunk (no choices) that ``include_usage`` asks for."""
        return data_frame(
            f'{self._head},"choices":[],"usage":{dumps(usage_body(usage))}}}'
        )

    def finish(self, answer: Answer, usage: Usage | None) -> bytes:
        """Tool calls, refusal, the finishing chunk, usage and ``[DONE]``."""
        frames: list[bytes] = []
        if answer.refusal:
            frames.append(self.refusal(answer.refusal))
        if answer.tool_calls:
            frames.append(self.tool_calls(answer.tool_calls))
        annotations = annotations_body(answer.citations) if answer.citations else None
        frames.append(self.final(finish_reason(answer), annotations))
        if self.include_usage and usage is not None:
            frames.append(self.usage(usage))
        frames.append(DONE_FRAME)
        return b"".join(frames)

    def error_chunk(self, failure: StreamFailure = INTERNAL_FAILURE) -> bytes:
        """The error chunk alone; its ``code`` says why (``server_error``, or
        ``run_timeout`` / ``server_shutdown`` when the server cut the run)."""
        code = "server_error" if failure is INTERNAL_FAILURE else failure.code
        return data_frame(dumps(error_body(failure.message, "server_error", code=code)))

    def error(self, failure: StreamFailure = INTERNAL_FAILURE) -> bytes:
        """The error chunk and ``[DONE]`` that end a failed stream: clients
        waiting for ``[DONE]`` stop reading instead of hanging on a connection
        the server is about to close."""
        return self.error_chunk(failure) + DONE_FRAME


async def stream_frames(
    events: AsyncIterator[RunEvent],
    encoder: ChatStreamEncoder,
    log: RequestLog | None = None,
    *,
    time_limit: float | None = None,
    watch: RunWatch = NO_WATCH,
) -> AsyncGenerator[bytes, None]:
    """Encode a run's events; a failure ends the stream with an error chunk
    and ``[DONE]``; ``watch`` records how the run went.

    Statuses only arrive when the server forwards them as reasoning. A run
    still going after ``time_limit`` seconds is cancelled and fails with
    ``run_timeout``.
    """
    watch.start()
    yield encoder.start()
    deadline = run_deadline(time_limit)
    first_text = True
    try:
        async with deadline:
            async for event in events:
                if type(event) is TextDelta:
                    if first_text:
                        first_text = False
                        watch.first_text()
                    yield encoder.text(event.text)
                elif type(event) is RunCompleted:
                    if log is not None:
                        log.stream_outcome = (
                            "completed"
                            if event.answer.stop == "complete"
                            else "incomplete"
                        )
                    watch_end(watch, event)
                    yield encoder.finish(event.answer, event.usage)
                elif type(event) is StatusUpdate:
                    frame = encoder.reasoning(event)
                    if frame:
                        yield frame
    except Exception as exc:
        failure = stream_failure(deadline, time_limit, "chat")
        if log is not None:
            log.stream_outcome = "failed"
        watch.finish("failed", error=exc)
        yield encoder.error(failure)
    finally:
        watch.cut()  # nothing when the run ended above
