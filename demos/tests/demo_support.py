"""Helpers: reading what the demo API streams."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from openai.types.responses import Response


def drain(stream: Iterable[Any]) -> tuple[list[Any], Response]:
    """Every event of a Responses stream, and the final response."""
    events = list(stream)
    final = next(e.response for e in events if e.type == "response.completed")
    return events, final


def deltas(events: list[Any], final: Response) -> str:
    """The streamed text of the final answer message (not of commentary)."""
    answer = [
        item.id
        for item in final.output
        if item.type == "message" and item.phase == "final_answer"
    ]
    return "".join(
        e.delta
        for e in events
        if e.type == "response.output_text.delta" and e.item_id in answer
    )


def commentary(response: Response) -> list[str]:
    return [
        item.content[0].text
        for item in response.output
        if item.type == "message" and item.phase == "commentary"
    ]


def answer_text(response: Response) -> str:
    """The final answer's text (commentary messages excluded)."""
    return "".join(
        part.text
        for item in response.output
        if item.type == "message" and item.phase == "final_answer"
        for part in item.content
        if part.type == "output_text"
    )


def chat_text(stream: Iterable[Any]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
