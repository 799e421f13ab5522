"""How a paused run is presented on the Responses wire.

Each pending interrupt becomes a ``function_call`` named ``lgos_interrupt``
whose arguments are the interrupt's JSON payload and whose call id carries
the native interrupt id. Any text streamed before the pause stays as the
final-answer message in front of the calls.
"""

from __future__ import annotations

import json
from typing import Any

from langgraph_openai_serve.graph.answer import ToolCall
from langgraph_openai_serve.graph.errors import GraphError
from langgraph_openai_serve.graph.events import RunPaused
from langgraph_openai_serve.graph.interrupts import PendingInterrupt
from langgraph_openai_serve.openai.responses.interrupt_ids import call_id_for
from langgraph_openai_serve.openai.responses.items import (
    function_call_item,
    message_item,
    new_id,
    text_part,
)

INTERRUPT_TOOL_NAME = "lgos_interrupt"


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


def paused_items(paused: RunPaused) -> list[dict[str, Any]]:
    """The output items of a non-streaming paused Response."""
    calls = interrupt_calls(paused.interrupts)
    items: list[dict[str, Any]] = []
    if paused.text:
        content = [text_part(paused.text)]
        items.append(message_item(new_id("msg"), content, "completed", "final_answer"))
    items.extend(function_call_item(new_id("fc"), call, "completed") for call in calls)
    return items
