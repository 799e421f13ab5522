"""The input items of a kept Response: what its request carried, listable.

A request's input (a string, or items in the easy or full form) is kept as
Responses items in their full shape, each with an id, so ``GET
/responses/{id}/input_items`` lists them as OpenAI does and a later
``previous_response_id`` replays them unchanged. The list is what the
Response was generated from: for one that continues others, their input and
output items first, then its own input. Nothing here runs unless the
deployment keeps Responses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph_openai_serve.conversations.pages import (
    CursorNotFound,
    Order,
    page_of,
)
from langgraph_openai_serve.graph.errors import InvalidRequestError
from langgraph_openai_serve.openai.responses.items import new_id
from langgraph_openai_serve.openai.responses.schemas import (
    InputItem,
    ResponseCreateRequest,
)
from langgraph_openai_serve.responses.protocol import StoredTurn

_ID_PREFIXES = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "custom_tool_call": "ctc",
    "custom_tool_call_output": "ctco",
    "web_search_call": "ws",
    "reasoning": "rs",
    "mcp_approval_response": "mcpr",
}

INCLUDABLE = frozenset(
    {
        "code_interpreter_call.outputs",
        "computer_call_output.output.image_url",
        "file_search_call.results",
        "message.input_image.image_url",
        "message.output_text.logprobs",
        "reasoning.encrypted_content",
        "web_search_call.action.sources",
        "web_search_call.results",
    }
)
"""OpenAI's ``include`` values: accepted, and they add nothing, since LGOS
keeps no images, search results, logprobs or reasoning."""


def input_items_of(body: ResponseCreateRequest) -> list[dict[str, Any]]:
    """The request's input as full Responses items with ids."""
    return full_items(body.input)


def full_items(given: str | Sequence[InputItem]) -> list[dict[str, Any]]:
    """Input (a string, or items in the easy or full form) as full Responses
    items, each with an id: the one it came with, or a new one."""
    if isinstance(given, str):
        return [_message("user", [{"type": "input_text", "text": given}])]
    items: list[dict[str, Any]] = []
    for item in given:
        data = item.model_dump(mode="json", exclude_none=True, by_alias=True)
        kind = data.setdefault("type", "message")
        if kind == "message":
            content = data["content"]
            if isinstance(content, str):
                data["content"] = [_text_part(data["role"], content)]
            data.setdefault("status", "completed")
        items.append({"id": data.pop("id", None) or new_id(_ID_PREFIXES[kind]), **data})
    return items


def _message(role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": new_id("msg"),
        "type": "message",
        "role": role,
        "status": "completed",
        "content": content,
    }


def _text_part(role: str, text: str) -> dict[str, Any]:
    if role == "assistant":
        return {"type": "output_text", "text": text, "annotations": []}
    return {"type": "input_text", "text": text}


def check_include(values: list[str]) -> None:
    """Raises ``InvalidRequestError`` (param ``include``) for unknown values."""
    for value in values:
        if value not in INCLUDABLE:
            raise InvalidRequestError(
                f"Invalid value for 'include': '{value}' is not a supported value.",
                param="include",
            )


def used_items(chain: Sequence[StoredTurn]) -> list[dict[str, Any]]:
    """The items a kept Response was generated from, oldest first: the input
    and output items of each Response it continues (as they were kept
    there, ids included), then its own input. ``chain`` is the Response and
    its ancestors, oldest first (``ResponseStore.chain``)."""
    *earlier, own = chain
    return [*(item for turn in earlier for item in turn.items()), *own.input_items]


def items_page(
    items: list[dict[str, Any]],
    *,
    limit: int,
    order: Order,
    after: str | None,
    before: str | None = None,
) -> dict[str, Any]:
    """One page of a kept Response's input items as an OpenAI list.

    Raises:
        InvalidRequestError: a cursor names no item of the list.
    """
    try:
        page = page_of(items, limit=limit, order=order, after=after, before=before)
    except CursorNotFound as unknown:
        raise unknown_cursor(
            "input item", "this response", unknown.item_id, unknown.param
        ) from None
    return page.body()


def unknown_cursor(
    what: str, where: str, item_id: str | None, param: str = "after"
) -> InvalidRequestError:
    """The 400 for a paging cursor that names no item of the list."""
    return InvalidRequestError(
        f"No {what} '{item_id}' was found in {where}.", param=param
    )
