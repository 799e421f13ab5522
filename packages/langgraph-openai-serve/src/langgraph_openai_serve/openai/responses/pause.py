"""How a paused run is presented on the Responses wire.

By default each pending interrupt becomes a ``function_call`` named
``lgos_interrupt`` whose arguments are the interrupt's JSON payload and whose
call id carries the native interrupt id. A graph registered with
``interrupt_protocol="mcp_approval"`` presents each one as an
``mcp_approval_request`` instead (server label ``lgos``, the interrupting
node as ``name``, the payload as ``arguments``). Any text streamed before
the pause stays as the final-answer message in front of them.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph_openai_serve.graph.answer import ToolCall
from langgraph_openai_serve.graph.config import InterruptProtocol
from langgraph_openai_serve.graph.errors import GraphError
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.interrupts import PendingInterrupt
from langgraph_openai_serve.openai.responses.interrupt_ids import (
    approval_request_id,
    call_id_for,
)
from langgraph_openai_serve.openai.responses.items import (
    function_call_item,
    message_item,
    new_id,
    text_part,
)

INTERRUPT_TOOL_NAME = "lgos_interrupt"
APPROVAL_SERVER_LABEL = "lgos"


def interrupt_payload(interrupt: PendingInterrupt) -> str:
    """The interrupt's value as JSON text.

    Raises:
        GraphError: the graph interrupted with a value JSON cannot carry.
    """
    try:
        return json.dumps(interrupt.value)
    except (TypeError, ValueError) as exc:
        raise GraphError(f"An interrupt payload is not JSON: {exc}") from exc


def interrupt_calls(interrupts: tuple[PendingInterrupt, ...]) -> tuple[ToolCall, ...]:
    """One ``lgos_interrupt`` function call per pending interrupt."""
    return tuple(
        ToolCall(call_id_for(i.id), INTERRUPT_TOOL_NAME, interrupt_payload(i))
        for i in interrupts
    )


def approval_request_item(interrupt: PendingInterrupt) -> dict[str, Any]:
    """One pending interrupt as a complete ``mcp_approval_request`` item."""
    return {
        "id": approval_request_id(interrupt.id),
        "type": "mcp_approval_request",
        "server_label": APPROVAL_SERVER_LABEL,
        "name": interrupt.node or INTERRUPT_TOOL_NAME,
        "arguments": interrupt_payload(interrupt),
    }


def paused_items(
    paused: RunPaused, protocol: InterruptProtocol
) -> list[dict[str, Any]]:
    """The output items of a non-streaming paused Response."""
    items: list[dict[str, Any]] = []
    if paused.text:
        content = [text_part(paused.text)]
        items.append(message_item(new_id("msg"), content, "completed", "final_answer"))
    if protocol == "mcp_approval":
        items.extend(approval_request_item(i) for i in paused.interrupts)
    else:
        calls = interrupt_calls(paused.interrupts)
        items.extend(function_call_item(new_id("fc"), c, "completed") for c in calls)
    return items
