import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from approval_app import builder  # the refunds graph above, not yet compiled
from fastapi import FastAPI
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.integrations.postgres import PostgresRunCoordinator
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

DATABASE_URL = os.environ["REFUNDS_DATABASE_URL"]

# One pool per process, shared by the checkpointer and the coordinator.
pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
    DATABASE_URL,
    open=False,
    max_size=8,
    kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
)


async def refunds_graph() -> Any:
    await pool.open(wait=True)  # at startup: LGOS resolves graph factories
    return builder.compile(checkpointer=AsyncPostgresSaver(pool))


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await pool.close()


app = FastAPI(lifespan=lifespan)
LanggraphOpenaiServe(
    graphs=GraphRegistry(
        registry={
            "refunds": GraphConfig(
                graph=refunds_graph,
                description="Asks a human before a refund.",
                features={GraphFeature.INTERRUPTS},
                # Below max_size: each lease holds a connection while it runs.
                run_coordinator=PostgresRunCoordinator(pool, max_concurrent_leases=4),
            )
        }
    ),
    app=app,
).bind_openai_api()


async def create_tables() -> None:
    """LangGraph's checkpoint tables, once, before any API process starts."""
    async with pool:  # opens the pool, and closes it after
        await AsyncPostgresSaver(pool).setup()


if __name__ == "__main__":  # python postgres_app.py: create the tables
    asyncio.run(create_tables())
