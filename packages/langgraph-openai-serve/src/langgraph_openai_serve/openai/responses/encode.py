"""Run events -> the typed Responses event stream.

``ResponseStreamEncoder`` holds one stream's state: the sequence number, the
output items in output-index order and the open final-answer message. It
decides every event once and hands each to its sink: ``SseSink`` (the
default) makes the SSE frame a client reads, the recording sink of
background runs (``background/recording.py``) keeps the event to store it.
``stream.stream_frames`` drives it over a run's events.
"""

from __future__ import annotations

from typing import Any

from langgraph_openai_serve.graph.answer import Answer, ToolCall
from langgraph_openai_serve.graph.citations import Citation
from langgraph_openai_serve.graph.config import InterruptProtocol
from langgraph_openai_serve.graph.events import (
    RunPaused,
)
from langgraph_openai_serve.graph.server_tools import ServerToolCall, ServerToolResult
from langgraph_openai_serve.graph.status import StatusUpdate
from langgraph_openai_serve.graph.usage import Usage
from langgraph_openai_serve.openai.responses.approvals import (
    InterruptRejected,
    rejected_body,
)
from langgraph_openai_serve.openai.responses.items import (
    ItemStatus,
    ResponseShell,
    answer_status,
    calls_of,
    custom_call_item,
    custom_input,
    custom_output_item,
    function_call_item,
    incomplete_details,
    message_item,
    new_id,
    refusal_part,
    text_part,
    web_search_item,
)
from langgraph_openai_serve.openai.responses.pause import (
    approval_request_item,
    interrupt_calls,
)
from langgraph_openai_serve.openai.responses.sinks import SSE, OpenMessage, Sink
from langgraph_openai_serve.openai.responses.tools import WEB_SEARCH
from langgraph_openai_serve.openai.stream_failure import (
    INTERNAL_FAILURE,
    StreamFailure,
)


class ResponseStreamEncoder:
    """The events of one streamed Response, made by ``sink``.

    ``sequence``: the last sequence number already used (a background
    re-run goes on after its stored events).
    """

    def __init__(
        self,
        shell: ResponseShell,
        interrupt_protocol: InterruptProtocol = "function_call",
        *,
        sink: Sink = SSE,
        sequence: int = -1,
    ) -> None:
        self.shell = shell
        self.interrupt_protocol = interrupt_protocol
        self.sink = sink
        self.sequence = sequence
        self.output: list[dict[str, Any]] = []
        self.answer: OpenMessage | None = None
        self.searches: dict[str, tuple[dict[str, Any], int]] = {}
        self.terminal: dict[str, Any] | None = None
        """The Response object of the terminal event, once it is out."""

    def _event(self, type_: str, fields: dict[str, Any]) -> bytes:
        self.sequence += 1
        return self.sink.event(type_, fields, self.sequence)

    def _open_answer(self) -> tuple[OpenMessage, bytes]:
        """Add the final-answer message and its first content part."""
        item = message_item(new_id("msg"), [], "in_progress", "final_answer")
        index, added = self._add_item(item)
        message = self.answer = OpenMessage(item, index)
        return message, added + self._event(
            "response.content_part.added",
            {
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "part": text_part(""),
            },
        )

    def _add_item(self, item: dict[str, Any]) -> tuple[int, bytes]:
        index = len(self.output)
        self.output.append(item)
        frame = self._event(
            "response.output_item.added", {"output_index": index, "item": item}
        )
        return index, frame

    def start(self) -> bytes:
        """``response.created`` and ``response.in_progress``."""
        snapshot = self.shell.body("in_progress", [])
        return self._event("response.created", {"response": snapshot}) + self._event(
            "response.in_progress", {"response": snapshot}
        )

    def restart(self) -> bytes:
        """A re-run's start: ``response.in_progress`` alone, after the
        stored stream that holds ``response.created`` already."""
        snapshot = self.shell.body("in_progress", [])
        return self._event("response.in_progress", {"response": snapshot})

    def status(self, update: StatusUpdate) -> bytes:
        """A visible status as its own completed commentary message, or
        reasoning summary item (``statuses.py``)."""
        if update.hidden or not update.description:
            return b""
        if self.shell.reasoning_summary is not None:
            return self._reasoning(update.description)
        item = message_item(new_id("msg"), [], "in_progress", "commentary")
        index, added = self._add_item(item)
        part = text_part(update.description)
        frames = [
            added,
            *self._text_part_events(item["id"], index, 0, part, [update.description]),
        ]
        item["content"] = [part]
        item["status"] = "completed"
        frames.append(
            self._event(
                "response.output_item.done", {"output_index": index, "item": item}
            )
        )
        return b"".join(frames)

    def _reasoning(self, text: str) -> bytes:
        item: dict[str, Any] = {"id": new_id("rs"), "type": "reasoning", "summary": []}
        index, added = self._add_item(item)
        where = {"item_id": item["id"], "output_index": index, "summary_index": 0}
        part = {"type": "summary_text", "text": text}
        frames = [
            added,
            self._event(
                "response.reasoning_summary_part.added",
                {**where, "part": {"type": "summary_text", "text": ""}},
            ),
            self._event(
                "response.reasoning_summary_text.delta", {**where, "delta": text}
            ),
            self._event(
                "response.reasoning_summary_text.done", {**where, "text": text}
            ),
            self._event(
                "response.reasoning_summary_part.done", {**where, "part": part}
            ),
        ]
        item["summary"] = [part]
        item["status"] = "completed"
        frames.append(
            self._event(
                "response.output_item.done", {"output_index": index, "item": item}
            )
        )
        return b"".join(frames)

    def _text_part_events(
        self,
        item_id: str,
        index: int,
        content_index: int,
        part: dict[str, Any],
        deltas: list[str],
    ) -> list[bytes]:
        where = {
            "item_id": item_id,
            "output_index": index,
            "content_index": content_index,
        }
        frames = [
            self._event("response.content_part.added", {**where, "part": text_part("")})
        ]
        frames.extend(
            self._event(
                "response.output_text.delta", {**where, "delta": delta, "logprobs": []}
            )
            for delta in deltas
        )
        frames.extend(self._text_done(where, part))
        return frames

    def _text_done(self, where: dict[str, Any], part: dict[str, Any]) -> list[bytes]:
        frames = [
            self._event(
                "response.output_text.annotation.added",
                {**where, "annotation_index": position, "annotation": note},
            )
            for position, note in enumerate(part["annotations"])
        ]
        frames.append(
            self._event(
                "response.output_text.done",
                {**where, "text": part["text"], "logprobs": []},
            )
        )
        frames.append(
            self._event("response.content_part.done", {**where, "part": part})
        )
        return frames

    def server_call(self, call: ServerToolCall) -> bytes:
        """A selected server tool was called: custom input, or a search begins."""
        if call.name == WEB_SEARCH:
            item = web_search_item(call, "in_progress")
            index, added = self._add_item(item)
            self.searches[call.call_id] = (item, index)
            where = {"item_id": item["id"], "output_index": index}
            item["status"] = "searching"
            return (
                added
                + self._event("response.web_search_call.in_progress", where)
                + self._event("response.web_search_call.searching", where)
            )
        text = custom_input(call)
        item = custom_call_item(new_id("ctc"), call, "in_progress", "")
        index, added = self._add_item(item)
        where = {"item_id": item["id"], "output_index": index}
        item.update(input=text, status="completed")
        return b"".join(
            [
                added,
                self._event(
                    "response.custom_tool_call_input.delta", {**where, "delta": text}
                ),
                self._event(
                    "response.custom_tool_call_input.done", {**where, "input": text}
                ),
                self._event(
                    "response.output_item.done", {"output_index": index, "item": item}
                ),
            ]
        )

    def server_result(self, result: ServerToolResult) -> bytes:
        """A selected server tool returned (search results stay private)."""
        if result.name == WEB_SEARCH:
            item, index = self.searches.pop(result.call_id)
            item["status"] = "completed"
            where = {"item_id": item["id"], "output_index": index}
            return self._event(
                "response.web_search_call.completed", where
            ) + self._event(
                "response.output_item.done", {"output_index": index, "item": item}
            )
        item = custom_output_item(result)
        index, added = self._add_item(item)
        return added + self._event(
            "response.output_item.done", {"output_index": index, "item": item}
        )

    def text(self, delta: str) -> bytes:
        """One answer text delta (opening the answer message on the first)."""
        frames = b""
        message = self.answer
        if message is None:
            message, frames = self._open_answer()
        message.parts.append(delta)
        self.sequence += 1
        return frames + self.sink.text(message, self.sequence, delta)

    def finish(self, answer: Answer, usage: Usage | None) -> bytes:
        """Close the answer, emit function calls and the terminal event."""
        status = answer_status(answer)
        needs_message = bool(answer.text or answer.refusal or not answer.tool_calls)
        frames = self._finish_message(
            answer.text, answer.citations, answer.refusal, status, needs_message
        )
        frames.extend(self._function_calls(calls_of(answer)))
        incomplete = incomplete_details(answer)
        final = self.shell.body(status, self.output, usage=usage, incomplete=incomplete)
        self.terminal = final
        terminal = (
            "response.completed" if status == "completed" else "response.incomplete"
        )
        frames.append(self._event(terminal, {"response": final}))
        return b"".join(frames)

    def pause(self, paused: RunPaused) -> bytes:
        """Close any streamed text, present the pending interrupts and
        complete the Response: a pause is a completed turn awaiting answers."""
        frames = self._finish_message(
            paused.text, (), None, "completed", bool(paused.text)
        )
        if self.interrupt_protocol == "mcp_approval":
            for interrupt in paused.interrupts:
                item = approval_request_item(interrupt)
                index, added = self._add_item(item)
                frames.append(added)
                frames.append(
                    self._event(
                        "response.output_item.done",
                        {"output_index": index, "item": item},
                    )
                )
        else:
            calls = interrupt_calls(paused.interrupts)
            frames.extend(self._function_calls([(c, "completed") for c in calls]))
        final = self.shell.body("completed", self.output, usage=paused.usage)
        self.terminal = final
        frames.append(self._event("response.completed", {"response": final}))
        return b"".join(frames)

    def _function_calls(self, calls: list[tuple[ToolCall, ItemStatus]]) -> list[bytes]:
        frames: list[bytes] = []
        for call, call_status in calls:
            item = function_call_item(new_id("fc"), call, "in_progress", arguments="")
            index, added = self._add_item(item)
            where = {"item_id": item["id"], "output_index": index}
            frames.append(added)
            frames.append(
                self._event(
                    "response.function_call_arguments.delta",
                    {**where, "delta": call.arguments},
                )
            )
            frames.append(
                self._event(
                    "response.function_call_arguments.done",
                    {**where, "name": call.name, "arguments": call.arguments},
                )
            )
            item.update(arguments=call.arguments, status=call_status)
            frames.append(
                self._event(
                    "response.output_item.done", {"output_index": index, "item": item}
                )
            )
        return frames

    def _finish_message(
        self,
        text: str,
        citations: tuple[Citation, ...],
        refusal: str | None,
        status: str,
        needs_message: bool,
    ) -> list[bytes]:
        message = self.answer
        if message is None and not needs_message:
            return []
        frames: list[bytes] = []
        if message is None:
            item = message_item(new_id("msg"), [], "in_progress", "final_answer")
            index, added = self._add_item(item)
            message = self.answer = OpenMessage(item, index)
            frames.append(added)
        item, index = message.item, message.index
        content: list[dict[str, Any]] = []
        if text or message.parts or not refusal:
            part = text_part(text, citations)
            where = {"item_id": item["id"], "output_index": index, "content_index": 0}
            if not message.parts:
                frames.append(
                    self._event(
                        "response.content_part.added", {**where, "part": text_part("")}
                    )
                )
            frames.extend(self._text_done(where, part))
            content.append(part)
        if refusal:
            where = {
                "item_id": item["id"],
                "output_index": index,
                "content_index": len(content),
            }
            part = refusal_part(refusal)
            frames.append(
                self._event(
                    "response.content_part.added", {**where, "part": refusal_part("")}
                )
            )
            frames.append(
                self._event("response.refusal.delta", {**where, "delta": refusal})
            )
            frames.append(
                self._event("response.refusal.done", {**where, "refusal": refusal})
            )
            frames.append(
                self._event("response.content_part.done", {**where, "part": part})
            )
            content.append(part)
        item["content"] = content
        item["status"] = status
        frames.append(
            self._event(
                "response.output_item.done", {"output_index": index, "item": item}
            )
        )
        self.answer = None
        return frames

    def rejected(self, rejection: InterruptRejected) -> bytes:
        """``response.failed`` with ``code: "interrupt_rejected"``."""
        failed = self.terminal = rejected_body(rejection)
        return self._event("response.failed", {"response": failed})

    def fail(self, failure: StreamFailure = INTERNAL_FAILURE) -> bytes:
        """``error`` then ``response.failed`` keeping partial output."""
        message = self.answer
        if message is not None:
            message.item["content"] = [text_part("".join(message.parts))]
        for item in self.output:
            if item["status"] in ("in_progress", "searching"):
                item["status"] = "incomplete"
        error = {"code": failure.code, "message": failure.message}
        failed = self.terminal = self.shell.body("failed", self.output, error=error)
        return self._event("error", {**error, "param": None}) + self._event(
            "response.failed", {"response": failed}
        )
