"""The demo API: every demo graph served on the OpenAI routes.

``uv run just up`` starts it with everything it needs; ``lgos-demo-api``
serves it alone on http://127.0.0.1:8000/v1 by default. With a database
(``DEMO_DATABASE_URL`` or ``LGOS_DATABASE_URL``) background runs go to the
PostgreSQL queue (run ``lgos-demo-setup`` once first, and ``lgos worker``
to execute them); without one they run in this process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from langgraph_openai_serve import LanggraphOpenaiServe, Settings

from lgos_demos.registry import build_demo_registry
from lgos_demos.settings import DemoSettings


def serve_settings(settings: DemoSettings) -> Settings:
    """LGOS's settings (``LGOS_*``), on PostgreSQL when a database is set."""
    if settings.DATABASE_URL is None:
        return Settings()
    return Settings(BACKGROUND_BACKEND="postgres", DATABASE_URL=settings.DATABASE_URL)


def create_app(settings: DemoSettings | None = None) -> FastAPI:
    config = settings if settings is not None else DemoSettings()
    demo = build_demo_registry(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await demo.close()

    app = FastAPI(title="LGOS demo API", lifespan=lifespan)
    LanggraphOpenaiServe(
        graphs=demo.registry, app=app, settings=serve_settings(config)
    ).bind_openai_api()
    return app
