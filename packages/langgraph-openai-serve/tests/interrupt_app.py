"""An interrupt-enabled app on PostgreSQL for the multi-process tests.

Each uvicorn process owns one pool (opened by the graph factory at startup)
shared by the checkpointer and the run coordinator. The answer node leaves
marker files and is held until the test creates the ``RELEASE`` file, so
tests can race two processes or kill one mid-run.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from interrupt_graphs import QUESTION, Decision
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

RELEASE = "answer.release"
"""The marker file that lets held answer nodes finish."""


def create_app() -> FastAPI:
    markers = Path(os.environ["LGOS_TEST_MARKER_DIR"])
    pool = AsyncConnectionPool(
        os.environ["LGOS_TEST_PG_URI"],
        open=False,
        max_size=4,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )

    async def ask(state: Decision) -> dict[str, Any]:
        return {"decision": interrupt(QUESTION)}

    async def answer(state: Decision) -> dict[str, Any]:
        mark = uuid.uuid4().hex
        (markers / f"answer-{mark}.started").touch()
        # Held until the test process releases it through a file (no event
        # crosses processes), so a race or a kill happens mid-run for sure.
        while not (markers / RELEASE).exists():  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        (markers / f"answer-{mark}.finished").touch()
        return {"messages": [AIMessage(content=f"Refund {state['decision']}.")]}

    async def build_graph() -> Any:
        await pool.open()
        builder = StateGraph(Decision)
        builder.add_node("ask", ask)
        builder.add_node("answer", answer)
        builder.add_edge(START, "ask")
        builder.add_edge("ask", "answer")
        builder.add_edge("answer", END)
        return builder.compile(checkpointer=AsyncPostgresSaver(pool))

    registry = GraphRegistry(
        registry={
            "refund": GraphConfig(
                graph=build_graph,
                description="refund approvals on PostgreSQL",
                features={GraphFeature.INTERRUPTS},
                run_coordinator=PostgresRunCoordinator(pool, max_concurrent_leases=2),
            )
        }
    )
    app = FastAPI()
    LanggraphOpenaiServe(graphs=registry, app=app).bind_openai_api()
    return app
