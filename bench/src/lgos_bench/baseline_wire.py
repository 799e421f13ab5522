"""The baseline's hand-written wire format: what a careful person would write
for one known workload, with no validation and no general machinery.

It produces the same frames as LGOS for the bench graphs (Chat chunks with the
usage chunk and ``[DONE]``; the Responses event sequence with commentary,
citations and function calls) so that both servers send the same bytes' worth.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import RunnableConfig

from lgos_bench.workload import AnyGraph

dumps = json.JSONEncoder(separators=(",", ":")).encode
"""Compact JSON, as the OpenAI API (and LGOS) writes it."""

_MODES_CHAT: Any = ["messages", "values"]
_MODES_STATUS: Any = ["messages", "values", "custom"]
_DELTA_TYPE = '{"type":"response.output_text.delta",'

UsageOf = Callable[[AIMessage], Mapping[str, Any] | None]
"""Where an answer's usage comes from: its final message (the plain
baseline) or a usage handler over every model call (the same-work one)."""


def message_usage(message: AIMessage) -> Mapping[str, Any] | None:
    """The final message's own usage: the last model call's only."""
    return message.usage_metadata


def _usage_chat(usage: Any) -> dict[str, Any]:
    usage = usage or {}
    return {
        "prompt_tokens": usage.get("input_tokens", 0),
        "completion_tokens": usage.get("output_tokens", 0),
        "total_tokens": usage.get("total_tokens", 0),
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }


def _usage_responses(usage: Any) -> dict[str, Any]:
    usage = usage or {}
    return {
        "input_tokens": usage.get("input_tokens", 0),
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.get("output_tokens", 0),
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.get("total_tokens", 0),
    }


def _chat_annotations(message: AIMessage) -> list[dict[str, Any]]:
    return [
        {
            "type": "url_citation",
            "url_citation": {k: v for k, v in note.items() if k != "type"},
        }
        for note in _annotations(message)
    ]


def _annotations(message: AIMessage) -> list[dict[str, Any]]:
    if isinstance(message.content, str):
        return []
    notes, offset = [], 0
    for block in message.content:
        if isinstance(block, dict) and block.get("type") == "text":
            for note in block.get("annotations") or ():
                notes.append(
                    {
                        "type": "url_citation",
                        "url": note["url"],
                        "title": note.get("title", ""),
                        "start_index": note["start_index"] + offset,
                        "end_index": note["end_index"] + offset,
                    }
                )
            offset += len(block["text"])
    return notes


def _calls(message: AIMessage) -> list[tuple[str, str, str]]:
    return [
        (c["id"] or "", c["name"], json.dumps(c["args"])) for c in message.tool_calls
    ]


# -- Chat Completions ---------------------------------------------------------


def chat_completion(
    model: str, message: AIMessage, usage: Mapping[str, Any] | None
) -> dict[str, Any]:
    calls = _calls(message)
    body: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    body["refusal"] = None
    notes = _chat_annotations(message)
    if notes:
        body["annotations"] = notes
    if calls:
        body["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": body,
                "finish_reason": "tool_calls" if calls else "stop",
                "logprobs": None,
            }
        ],
        "usage": _usage_chat(usage),
    }


async def chat_stream(
    graph: AnyGraph,
    inputs: dict[str, Any],
    model: str,
    include_usage: bool,
    config: RunnableConfig | None = None,
    usage_of: UsageOf = message_usage,
) -> AsyncIterator[str]:
    envelope = (
        f'data: {{"id":"chatcmpl-{uuid.uuid4().hex}",'
        f'"object":"chat.completion.chunk","created":{int(time.time())},'
        f'"model":{json.dumps(model)},'
    )
    head = envelope + '"choices":['
    role = '"delta":{"role":"assistant","content":""}'
    yield f'{head}{{"index":0,{role},"finish_reason":null}}]}}\n\n'
    final: Any = None
    parts: AsyncIterator[Any] = graph.astream(inputs, config, stream_mode=_MODES_CHAT)
    async for mode, data in parts:
        if mode == "values":
            final = data
        elif isinstance(data[0], AIMessageChunk) and (text := data[0].text):
            yield (
                f'{head}{{"index":0,"delta":{{"content":{json.dumps(text)}}},'
                '"finish_reason":null}]}\n\n'
            )
    message: AIMessage = final["messages"][-1]
    calls = _calls(message)
    if calls:
        deltas = [
            {
                "index": k,
                "id": i,
                "type": "function",
                "function": {"name": n, "arguments": a},
            }
            for k, (i, n, a) in enumerate(calls)
        ]
        tool_delta = f'"delta":{{"tool_calls":{dumps(deltas)}}}'
        yield f'{head}{{"index":0,{tool_delta},"finish_reason":null}}]}}\n\n'
    notes = _chat_annotations(message)
    delta = dumps({"annotations": notes}) if notes else "{}"
    reason = "tool_calls" if calls else "stop"
    yield f'{head}{{"index":0,"delta":{delta},"finish_reason":"{reason}"}}]}}\n\n'
    if include_usage:
        usage = dumps(_usage_chat(usage_of(message)))
        yield f'{envelope}"choices":[],"usage":{usage}}}\n\n'
    yield "data: [DONE]\n\n"


# -- Responses ----------------------------------------------------------------


def response_object(
    rid: str,
    created: int,
    model: str,
    status: str,
    output: list[Any],
    usage: Any,
    tools: list[Any],
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "store": False,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": tools,
        "usage": usage,
        "user": None,
    }


def output_items(message: AIMessage, status: str = "completed") -> list[Any]:
    items: list[Any] = []
    if message.text or not message.tool_calls:
        part = {
            "type": "output_text",
            "text": message.text,
            "annotations": _annotations(message),
            "logprobs": [],
        }
        items.append(_message_item("final_answer", [part], status))
    items.extend(
        {
            "id": f"fc_{uuid.uuid4().hex}",
            "type": "function_call",
            "status": status,
            "call_id": i,
            "name": n,
            "arguments": a,
        }
        for i, n, a in _calls(message)
    )
    return items


def _message_item(phase: str, content: list[Any], status: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex}",
        "type": "message",
        "role": "assistant",
        "status": status,
        "phase": phase,
        "content": content,
    }


class _Events:
    """Sequence numbers and the output list of one Responses stream."""

    def __init__(self) -> None:
        self.seq = -1
        self.output: list[Any] = []

    def __call__(self, name: str, fields: dict[str, Any]) -> str:
        self.seq += 1
        payload = dumps({"type": name, **fields, "sequence_number": self.seq})
        return f"event: {name}\ndata: {payload}\n\n"

    def text_part(self, item: dict[str, Any], part: dict[str, Any]) -> str:
        where = {
            "item_id": item["id"],
            "output_index": self.output.index(item),
            "content_index": 0,
        }
        frames = [
            self(
                "response.output_text.annotation.added",
                {**where, "annotation_index": k, "annotation": note},
            )
            for k, note in enumerate(part["annotations"])
        ]
        frames.append(
            self(
                "response.output_text.done",
                {**where, "text": part["text"], "logprobs": []},
            )
        )
        frames.append(self("response.content_part.done", {**where, "part": part}))
        item.update(content=[part], status="completed")
        frames.append(
            self(
                "response.output_item.done",
                {"output_index": where["output_index"], "item": item},
            )
        )
        return "".join(frames)

    def delta_prefix(self, item: dict[str, Any]) -> str:
        """A text delta frame of ``item`` up to its sequence number."""
        return (
            f"event: response.output_text.delta\ndata: {_DELTA_TYPE}"
            f'"item_id":"{item["id"]}","output_index":{self.output.index(item)},'
            '"content_index":0,"logprobs":[],"sequence_number":'
        )

    def open_message(self, phase: str) -> tuple[dict[str, Any], str]:
        item = _message_item(phase, [], "in_progress")
        self.output.append(item)
        index = len(self.output) - 1
        empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        frames = self(
            "response.output_item.added", {"output_index": index, "item": item}
        )
        frames += self(
            "response.content_part.added",
            {
                "item_id": item["id"],
                "output_index": index,
                "content_index": 0,
                "part": empty,
            },
        )
        return item, frames


async def responses_stream(
    graph: AnyGraph,
    inputs: dict[str, Any],
    model: str,
    tools: list[Any],
    statuses: bool,
    config: RunnableConfig | None = None,
    usage_of: UsageOf = message_usage,
) -> AsyncIterator[str]:
    rid, created = f"resp_{uuid.uuid4().hex}", int(time.time())
    ev = _Events()
    shell = response_object(rid, created, model, "in_progress", [], None, tools)
    yield ev("response.created", {"response": shell})
    yield ev("response.in_progress", {"response": shell})
    answer: dict[str, Any] | None = None
    prefix = ""
    final: Any = None
    modes = _MODES_STATUS if statuses else _MODES_CHAT
    parts: AsyncIterator[Any] = graph.astream(inputs, config, stream_mode=modes)
    async for mode, data in parts:
        if mode == "values":
            final = data
        elif mode == "custom":
            description = data["event"]["data"]["description"]
            item, frames = ev.open_message("commentary")
            ev.seq += 1
            delta = json.dumps(description)
            frames += f'{ev.delta_prefix(item)}{ev.seq},"delta":{delta}}}\n\n'
            part = {
                "type": "output_text",
                "text": description,
                "annotations": [],
                "logprobs": [],
            }
            yield frames + ev.text_part(item, part)
        elif isinstance(data[0], AIMessageChunk) and (text := data[0].text):
            frames = ""
            if answer is None:
                answer, frames = ev.open_message("final_answer")
                prefix = ev.delta_prefix(answer)
            ev.seq += 1
            yield f'{frames}{prefix}{ev.seq},"delta":{json.dumps(text)}}}\n\n'
    message: AIMessage = final["messages"][-1]
    items = output_items(message)
    frames = ""
    if answer is not None:
        frames = ev.text_part(answer, items.pop(0)["content"][0])
    for call in items:
        call_input = {**call, "status": "in_progress", "arguments": ""}
        ev.output.append(call)
        index = len(ev.output) - 1
        where = {"item_id": call["id"], "output_index": index}
        frames += ev(
            "response.output_item.added", {"output_index": index, "item": call_input}
        )
        frames += ev(
            "response.function_call_arguments.delta",
            {**where, "delta": call["arguments"]},
        )
        frames += ev(
            "response.function_call_arguments.done",
            {**where, "name": call["name"], "arguments": call["arguments"]},
        )
        frames += ev("response.output_item.done", {"output_index": index, "item": call})
    usage = _usage_responses(usage_of(message))
    done = response_object(rid, created, model, "completed", ev.output, usage, tools)
    yield frames + ev("response.completed", {"response": done})


def response_completed(
    model: str,
    message: AIMessage,
    tools: list[Any],
    usage: Mapping[str, Any] | None,
) -> dict[str, Any]:
    return response_object(
        f"resp_{uuid.uuid4().hex}",
        int(time.time()),
        model,
        "completed",
        output_items(message),
        _usage_responses(usage),
        tools,
    )
