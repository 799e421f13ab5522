"""Durable runs: a checkpoint after every node, so a re-run continues.

A background run on PostgreSQL may lose its worker (a crash) or be handed
back by it (a stop). Checkpointed after every node (``durability="sync"``:
a node's checkpoint is written before the next node starts), its re-run
resumes from the last checkpoint, and the nodes that completed are not
executed again. The graph's own checkpointer is used when it has one,
otherwise the one the background backend supplies.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from langgraph_openai_serve.graph.checkpoint_keys import checkpoint_key
from langgraph_openai_serve.graph.config import AnyGraph

_RUN_NAMESPACE = uuid.UUID("3f1c2a8e-5d0b-4c5e-9a63-6b1d8f0e2c47")


@dataclass(frozen=True, slots=True)
class DurableThread:
    """Where a durable run keeps its checkpoints, and whether it resumes."""

    thread_id: str
    resumed: bool
    """An earlier attempt left checkpoints: continue from the last one."""


def durable_thread_id(scope: str, model: str, run_name: str) -> str:
    """The checkpoint key of the durable run named ``run_name`` (unique in
    its scope and model, e.g. the id its caller gave the run).

    An LGOS checkpoint key, so ``delete_expired_interrupt_runs`` also sweeps
    the threads of runs that never finished.
    """
    return checkpoint_key(scope, model, uuid.uuid5(_RUN_NAMESPACE, run_name))


def with_checkpointer(
    graph: AnyGraph, fallback: BaseCheckpointSaver[Any] | None
) -> AnyGraph | None:
    """The graph checkpointing with its own saver, else with ``fallback``;
    ``None`` when neither exists."""
    if isinstance(graph.checkpointer, BaseCheckpointSaver):
        return graph
    if fallback is None:
        return None
    return graph.copy(update={"checkpointer": fallback})


async def plan_durable_run(graph: AnyGraph, thread_id: str) -> DurableThread:
    """Whether an earlier attempt of the run left checkpoints to resume."""
    where: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    saved = await graph.checkpointer.aget_tuple(where)  # type: ignore[union-attr]
    return DurableThread(thread_id, resumed=saved is not None)
