"""Helpers: starting and stopping the stack, reading what the demo API streams."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lgos_testkit.stack import RunningStack
from lgos_testkit.stack import start_stack as kit_start_stack
from openai.types.responses import Response

STARTUP_SECONDS = 60


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


class Stack(RunningStack):
    """A running demo stack, with the URLs these tests use by name."""

    @property
    def api_url(self) -> str:
        return self.urls["demo API"]

    @property
    def files_url(self) -> str:
        return self.urls["Files API"]

    @property
    def model_url(self) -> str:
        return self.urls["demo model"]

    @property
    def database_url(self) -> str:
        return self.urls["PostgreSQL"]

    @property
    def search_url(self) -> str:
        return self.urls["search"].split("/search", 1)[0]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without DEMO_/LGOS_ settings that would redirect the stack."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEMO_", "LGOS_"))}
    return env | {"DEMO_MODEL_TOKEN_DELAY": "0"} | extra


def postgres_dir() -> Path:
    """A fresh folder for the stack's PostgreSQL cluster.

    As root the server runs as its own user and the folders above its data
    are made traversable, so it lives under the system temp folder rather
    than in pytest's private one. Delete it after the stack stopped."""
    return Path(tempfile.mkdtemp(prefix="lgos-demo-pg-"))


def start_stack(
    state_dir: Path,
    *,
    env: dict[str, str],
    postgres: Path | None = None,
    without: tuple[str, ...] = ("litellm",),
    startup_seconds: float = STARTUP_SECONDS,
) -> Stack:
    """``lgos-demo-stack`` on free ports; returns once it wrote stack.json.

    LiteLLM (and with it the model sync and the UIs) is left out unless
    ``without`` says otherwise: most tests need only the demo services."""
    running = kit_start_stack(
        state_dir,
        env=env,
        args=(
            *([f"--postgres-dir={postgres}"] if postgres is not None else []),
            *(f"--without={name}" for name in without),
        ),
        timeout=startup_seconds,
    )
    return Stack(
        running.process, running.state_dir, running.output, running.pids, running.urls
    )
