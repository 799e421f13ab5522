"""LangGraph's PostgreSQL saver, each of its statements bounded.

A durable run's checkpoints go through LangGraph's ``AsyncPostgresSaver`` on
the backend's pool. Its checkout is bounded by the pool's timeout, but a
statement sent to a database that stalls (its host still answers TCP, its
processes do not) would wait for as long as the stall lasts. ``BoundedSaver``
bounds each read and write by ``deadline`` seconds (``Deadline``, the same
bound the stores use): past it the run's step fails with ``DatabaseTimeout``,
a database fault, and the run is handed back and runs again from its last
checkpoint once the database answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from langgraph_openai_serve.operations.outages import Deadline


class BoundedSaver(AsyncPostgresSaver):
    """``AsyncPostgresSaver`` whose reads and writes take at most
    ``deadline`` seconds each."""

    def __init__(self, conn: Any, *, deadline: float) -> None:
        super().__init__(conn)
        self.deadline = deadline

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        async with Deadline(self.deadline):
            return await super().aget_tuple(config)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        async with Deadline(self.deadline):
            return await super().aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        async with Deadline(self.deadline):
            await super().aput_writes(config, writes, task_id, task_path)
