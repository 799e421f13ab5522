"""What a finished Response means for the chat: the commit rules.

Committing is per exchange: the user message and output items enter the
ledger (and the saved state) only when a Response completed or ended
incomplete; a failed, cancelled or refused request leaves the ledger as it
was. ``settle`` applies that to the chat's ledger and state (the caller
saves them) and says what to show and which client calls to answer before
the next request.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from lgos_chainlit.chats import ChatState, ResponseChain
from lgos_chainlit.events import FileShown, Notice, TurnFinished, UIEvent
from lgos_chainlit.files import DISPLAY_FILE, FilesClient
from lgos_chainlit.files import display_file as fetch_display_file
from lgos_chainlit.interrupts import PendingInterrupt, is_interrupt
from lgos_chainlit.ledger import (
    Item,
    Ledger,
    function_calls,
    function_output,
    item_json,
)
from lgos_chainlit.request_parts import Exchange


@dataclass(frozen=True)
class Settled:
    """What comes after a settled exchange."""

    notices: tuple[Notice, ...] = ()
    client_calls: tuple[Item, ...] = ()
    """Function calls to answer and send back in another request."""


def settle(
    exchange: Exchange,
    response: Any,
    ledger: Ledger,
    state: ChatState,
    *,
    stores_responses: bool,
) -> Settled:
    """Commit a finished exchange to ``ledger`` and ``state``."""
    if exchange.resuming is not None:
        state.pending = None
    if response.status in ("failed", "cancelled"):
        return Settled()
    output = [item_json(item) for item in response.output]
    calls = function_calls(output)
    interrupts = [item for item in output if is_interrupt(item)]
    if not interrupts and response.status == "completed":
        ledger.commit([*exchange.commit_first, *output])
        if stores_responses:
            state.chain = ResponseChain(response.id, len(ledger))
        return Settled(client_calls=tuple(calls))
    # Calls that will not be answered now must not enter the ledger.
    kept = [
        item
        for item in output
        if item.get("type") != "function_call" and not is_interrupt(item)
    ]
    ledger.commit([*exchange.commit_first, *kept])
    # The server's Response holds calls the ledger leaves out: the next turn
    # replays the ledger rather than continue it.
    state.chain = None
    if interrupts:
        state.pending = PendingInterrupt(response_id=response.id, calls=interrupts)
        if any(not is_interrupt(call) for call in calls):
            return Settled(
                (Notice("warning", "Other tool calls of the paused run were ignored."),)
            )
    elif calls:
        return Settled(
            (Notice("warning", "The answer was cut off; its tool calls were not run."),)
        )
    return Settled()


async def answer_client_calls(
    calls: tuple[Item, ...], files: FilesClient | None, outputs: list[Item]
) -> AsyncGenerator[UIEvent, None]:
    """Run the client's functions for ``calls``, appending one output per
    call to ``outputs``; a function this client lacks answers an error."""
    for call in calls:
        if call.get("name") == DISPLAY_FILE:
            shown, output = await fetch_display_file(call, files)
            if shown is not None:
                yield FileShown(shown)
            else:
                yield Notice(
                    "warning", f"A file could not be shown: {output['output']}"
                )
        else:
            output = function_output(
                str(call["call_id"]), '{"error":"this client has no such function"}'
            )
        outputs.append(output)


def turn_finished(response: Any) -> TurnFinished:
    """The event that says how a Response ended."""
    usage = getattr(response, "usage", None)
    details = getattr(response, "incomplete_details", None)
    error = getattr(response, "error", None)
    return TurnFinished(
        response_id=response.id,
        status=response.status,
        incomplete_reason=getattr(details, "reason", None),
        error=getattr(error, "message", None),
        input_tokens=getattr(usage, "input_tokens", None),
        output_tokens=getattr(usage, "output_tokens", None),
    )
