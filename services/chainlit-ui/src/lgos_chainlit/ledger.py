"""The Responses input ledger: a chat's history, kept by the client.

A stateless LGOS keeps no foreground Response, so every request carries the
items the next turn needs (lgos-openai-compatibility.md, "Stateless Item
Continuation"); on one that keeps Responses the ledger is what a turn falls
back on when its chain is gone. It holds each user message, every output
item exactly as the server sent it (commentary, answers, refusals, tool
calls and outputs, searches), and a ``function_call_output`` for each
client function call. Items are
kept as the JSON the server produced (``to_dict``: only fields it set), so a
replay is byte-for-byte what the SDK received.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

from openai import BaseModel

Item = dict[str, Any]


def item_json(item: BaseModel | Item) -> Item:
    """An SDK output item as the JSON object the server sent."""
    if isinstance(item, dict):
        return copy.deepcopy(item)
    return item.to_dict(mode="json")


def user_message(text: str, file_ids: Sequence[str] = ()) -> Item:
    """A user turn: its text and ``input_file`` parts for uploaded files."""
    content: list[Item] = []
    if text:
        content.append({"type": "input_text", "text": text})
    content.extend({"type": "input_file", "file_id": file_id} for file_id in file_ids)
    return {"type": "message", "role": "user", "content": content}


def function_output(call_id: str, output: str) -> Item:
    """The ``function_call_output`` answering one function call."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def function_calls(items: Iterable[Item], name: str | None = None) -> list[Item]:
    """The ``function_call`` items (optionally of one function)."""
    return [
        item
        for item in items
        if item.get("type") == "function_call"
        and (name is None or item.get("name") == name)
    ]


class Ledger:
    """The ordered input items of one chat."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: list[Item] = [copy.deepcopy(item) for item in items]

    @property
    def items(self) -> list[Item]:
        """A copy of every item, oldest first."""
        return copy.deepcopy(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def commit(self, items: Iterable[Item]) -> None:
        """Append the items of one finished exchange, unchanged."""
        self._items.extend(copy.deepcopy(item) for item in items)

    def request_input(self, turn: Iterable[Item] = ()) -> list[Item]:
        """The ``input`` of the next request: the history, then ``turn``."""
        return [*self.items, *copy.deepcopy(list(turn))]

    def unanswered_calls(self) -> list[str]:
        """Call ids of function calls that have no output yet."""
        answered = {
            item.get("call_id")
            for item in self._items
            if item.get("type") == "function_call_output"
        }
        return [
            str(call.get("call_id"))
            for call in function_calls(self._items)
            if call.get("call_id") not in answered
        ]
