"""Responses output items and the Response object, as plain dicts.

Both the non-streaming route and the stream encoder build items here, so a
streamed response's terminal object equals what a non-streaming request for
the same answer returns (apart from ids and commentary).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

from langgraph_openai_serve.graph.answer import Answer, ToolCall
from langgraph_openai_serve.graph.citations import Citation
from langgraph_openai_serve.graph.server_tools import ServerToolCall, ServerToolResult
from langgraph_openai_serve.graph.usage import Usage
from langgraph_openai_serve.ids import random_hex
from langgraph_openai_serve.openai.responses.schemas import ResponseCreateRequest
from langgraph_openai_serve.openai.responses.statuses import reasoning_summary
from langgraph_openai_serve.openai.responses.tools import WEB_SEARCH

ItemStatus = Literal["in_progress", "completed", "incomplete"]
Phase = Literal["commentary", "final_answer"]

_INCOMPLETE_REASONS = {
    "length": "max_output_tokens",
    "content_filter": "content_filter",
}


_PLAIN_TEXT = {"type": "text"}


def _text_format(body: ResponseCreateRequest) -> dict[str, Any] | None:
    text_format = body.text.format if body.text is not None else None
    if text_format is None or text_format.type == "text":
        return None
    return text_format.model_dump(by_alias=True, exclude_none=True)


def _shown_format(shown: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if shown is None or shown.get("type") == "text" else shown


def new_id(prefix: str) -> str:
    return f"{prefix}_{random_hex()}"


def annotation(citation: Citation) -> dict[str, Any]:
    return {
        "type": "url_citation",
        "url": citation.url,
        "title": citation.title,
        "start_index": citation.start_index,
        "end_index": citation.end_index,
    }


def text_part(text: str, citations: tuple[Citation, ...] = ()) -> dict[str, Any]:
    return {
        "type": "output_text",
        "text": text,
        "annotations": [annotation(c) for c in citations],
        "logprobs": [],
    }


def refusal_part(refusal: str) -> dict[str, Any]:
    return {"type": "refusal", "refusal": refusal}


def message_item(
    item_id: str, content: list[dict[str, Any]], status: ItemStatus, phase: Phase
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "phase": phase,
        "content": content,
    }


def function_call_item(
    item_id: str, call: ToolCall, status: ItemStatus, arguments: str | None = None
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments if arguments is None else arguments,
    }


def custom_input(call: ServerToolCall) -> str:
    """The free-form input of a custom tool call (LangChain's ``__arg1``)."""
    args = call.args
    if set(args) == {"__arg1"} and isinstance(args["__arg1"], str):
        return args["__arg1"]
    values = list(args.values())
    if len(values) == 1 and isinstance(values[0], str):
        return values[0]
    return json.dumps(dict(args))


def search_action(call: ServerToolCall) -> dict[str, Any]:
    query = call.args.get("query")
    if not isinstance(query, str):
        query = custom_input(call)
    return {"type": "search", "query": query}


def custom_call_item(
    item_id: str, call: ServerToolCall, status: ItemStatus, input_text: str
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "custom_tool_call",
        "status": status,
        "call_id": call.call_id,
        "name": call.name,
        "input": input_text,
    }


def custom_output_item(result: ServerToolResult) -> dict[str, Any]:
    return {
        "id": new_id("ctco"),
        "type": "custom_tool_call_output",
        "status": "completed",
        "call_id": result.call_id,
        "output": result.output,
    }


def web_search_item(call: ServerToolCall, status: str) -> dict[str, Any]:
    return {
        "id": call.call_id,
        "type": "web_search_call",
        "status": status,
        "action": search_action(call),
    }


def activity_items(
    activity: tuple[ServerToolCall | ServerToolResult, ...],
) -> list[dict[str, Any]]:
    """Output items for server-tool activity, in the order it happened."""
    items: list[dict[str, Any]] = []
    for event in activity:
        is_search = event.name == WEB_SEARCH
        if isinstance(event, ServerToolCall):
            items.append(
                web_search_item(event, "completed")
                if is_search
                else custom_call_item(
                    new_id("ctc"), event, "completed", custom_input(event)
                )
            )
        elif not is_search:
            items.append(custom_output_item(event))
    return items


def answer_status(answer: Answer) -> ItemStatus:
    return "completed" if answer.stop == "complete" else "incomplete"


def incomplete_details(answer: Answer) -> dict[str, str] | None:
    reason = _INCOMPLETE_REASONS.get(answer.stop)
    return {"reason": reason} if reason else None


def answer_content(answer: Answer) -> list[dict[str, Any]]:
    """The final-answer message content, or [] when there is no message."""
    content: list[dict[str, Any]] = []
    if answer.text or not (answer.refusal or answer.tool_calls):
        content.append(text_part(answer.text, answer.citations))
    if answer.refusal:
        content.append(refusal_part(answer.refusal))
    return content


def calls_of(answer: Answer) -> list[tuple[ToolCall, ItemStatus]]:
    """Function calls to return; truncated ones only on incomplete answers."""
    status = answer_status(answer)
    calls = [(call, status) for call in answer.tool_calls]
    if status == "incomplete":
        calls.extend((call, "incomplete") for call in answer.truncated_calls)
    return calls


def answer_items(answer: Answer) -> list[dict[str, Any]]:
    """The output items of a non-streaming response."""
    items: list[dict[str, Any]] = []
    content = answer_content(answer)
    if content:
        items.append(
            message_item(new_id("msg"), content, answer_status(answer), "final_answer")
        )
    items.extend(
        function_call_item(new_id("fc"), call, status)
        for call, status in calls_of(answer)
    )
    return items


def usage_body(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {
            "cached_tokens": usage.cached_input_tokens,
            "cache_write_tokens": 0,
        },
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


@dataclass(frozen=True, slots=True)
class ResponseShell:
    """The request-derived fields every Response object of one request shares."""

    id: str
    created_at: int
    model: str
    instructions: str | None
    metadata: dict[str, str]
    user: str | None
    tools: list[dict[str, Any]]
    tool_choice: Any
    parallel_tool_calls: bool
    previous_response_id: str | None = None
    background: bool = False
    store: bool = False
    """Whether the deployment keeps this Response (``store`` in the object)."""
    conversation: str | None = None
    """The Conversation the Response adds to (the object shows it only then)."""
    text_format: dict[str, Any] | None = None
    """The request's JSON schema format, shown as ``text.format`` (plain
    text when ``None``)."""
    reasoning_summary: str | None = None
    """Set when status updates are reasoning summaries (``statuses.py``);
    the object then shows it as ``reasoning.summary``."""

    @classmethod
    def for_request(
        cls,
        body: ResponseCreateRequest,
        *,
        response_id: str | None = None,
        background: bool = False,
        store: bool = False,
        previous_response_id: str | None = None,
    ) -> ResponseShell:
        """``previous_response_id``: the id the Response shows when ``body``
        is the continued request (whose own is cleared)."""
        choice = body.tool_choice
        return cls(
            id=response_id or new_id("resp"),
            previous_response_id=previous_response_id or body.previous_response_id,
            background=background,
            store=store,
            conversation=body.conversation_id,
            reasoning_summary=reasoning_summary(body),
            text_format=_text_format(body),
            created_at=int(time.time()),
            model=body.model,
            instructions=body.instructions,
            metadata=dict(body.metadata or {}),
            user=body.user,
            tools=[tool.model_dump(exclude_none=True) for tool in body.tools or ()],
            tool_choice=choice.model_dump()
            if choice is not None and not isinstance(choice, str)
            else (choice or "auto"),
            parallel_tool_calls=(
                True if body.parallel_tool_calls is None else body.parallel_tool_calls
            ),
        )

    @classmethod
    def of_snapshot(cls, snapshot: dict[str, Any]) -> ResponseShell:
        """The shell a stored Response object was built from."""
        return cls(
            id=snapshot["id"],
            created_at=snapshot["created_at"],
            model=snapshot["model"],
            instructions=snapshot["instructions"],
            metadata=snapshot["metadata"],
            user=snapshot["user"],
            tools=snapshot["tools"],
            tool_choice=snapshot["tool_choice"],
            parallel_tool_calls=snapshot["parallel_tool_calls"],
            previous_response_id=snapshot["previous_response_id"],
            background=snapshot["background"],
            store=snapshot.get("store", False),
            conversation=(snapshot.get("conversation") or {}).get("id"),
            reasoning_summary=(snapshot.get("reasoning") or {}).get("summary"),
            text_format=_shown_format((snapshot.get("text") or {}).get("format")),
        )

    def body(
        self,
        status: str,
        output: list[dict[str, Any]],
        *,
        usage: Usage | None = None,
        error: dict[str, str] | None = None,
        incomplete: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A complete Response object in ``status``."""
        body = {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "background": self.background,
            "error": error,
            "incomplete_details": incomplete,
            "instructions": self.instructions,
            "metadata": self.metadata,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": self.parallel_tool_calls,
            "previous_response_id": self.previous_response_id,
            "store": self.store,
            "text": {"format": self.text_format or _PLAIN_TEXT},
            "tool_choice": self.tool_choice,
            "tools": self.tools,
            "usage": usage_body(usage),
            "user": self.user,
        }
        if self.conversation is not None:
            body["conversation"] = {"id": self.conversation}
        if self.reasoning_summary is not None:
            body["reasoning"] = {"effort": None, "summary": self.reasoning_summary}
        return body

    def final_body(
        self,
        answer: Answer,
        usage: Usage | None,
        activity: tuple[ServerToolCall | ServerToolResult, ...] = (),
    ) -> dict[str, Any]:
        """The non-streaming Response for ``answer``."""
        status = answer_status(answer)
        return self.body(
            status,
            [*activity_items(activity), *answer_items(answer)],
            usage=usage,
            incomplete=incomplete_details(answer),
        )
