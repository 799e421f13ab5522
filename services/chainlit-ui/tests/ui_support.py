"""What the UI's tests share beyond ``lgos_testkit``: the keys of the test
stack and a stream collector."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeVar

T = TypeVar("T")

UI_FILES_KEY = "sk-ui-test"
GRAPH_FILES_KEY = "sk-graph-test"
FILES_BUCKET = "lgos-chainlit-test"
LITELLM_MASTER_KEY = "sk-ui-test-master"


async def collect(events: AsyncIterator[T]) -> list[T]:
    return [event async for event in events]
