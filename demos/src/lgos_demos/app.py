"""The demo API: every demo graph served on the OpenAI routes.

``uv run just up`` starts it with everything it needs; ``lgos-demo-api``
serves it alone on http://127.0.0.1:8000/v1 by default.
"""

from __future__ import annotations

from fastapi import FastAPI
from langgraph_openai_serve import LanggraphOpenaiServe

from lgos_demos.registry import build_registry
from lgos_demos.settings import DemoSettings


def create_app(settings: DemoSettings | None = None) -> FastAPI:
    app = FastAPI(title="LGOS demo API")
    LanggraphOpenaiServe(graphs=build_registry(settings), app=app).bind_openai_api()
    return app
