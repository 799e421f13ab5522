"""The demo model's HTTP surface: ``/v1/chat/completions``, ``/v1/models``,
``/health``.

Requests are read leniently: any model name and API key work, and fields the
demo model has no use for (temperature, seed, logprobs, ...) are accepted and
ignored. Only a body that is not a chat request at all answers 400, in
OpenAI's error envelope.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from lgos_demos.demo_model.conversation import text_of
from lgos_demos.demo_model.script import script_reply
from lgos_demos.demo_model.wire import (
    Envelope,
    Shaped,
    completion,
    count_tokens,
    stream_chunks,
)


class ChatRequest(BaseModel):
    """The fields the demo model reads; everything else is allowed and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = ""
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool | None = False
    stream_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None
    n: int | None = Field(default=1, ge=1, le=8)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = None


def _error(status: int, message: str, param: str | None = None) -> JSONResponse:
    return JSONResponse(
        status_code=status,
        content={
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": None,
            }
        },
    )


def create_app(*, model_name: str, token_delay: float) -> FastAPI:
    """The demo model; ``token_delay`` seconds pass between streamed tokens."""
    app = FastAPI(title="LGOS demo model", docs_url=None, redoc_url=None)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or None
        return _error(400, f"Invalid request: {first.get('msg', 'bad body')}", where)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    def model_object(name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": 0, "owned_by": "lgos-demos"}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [model_object(model_name)]}

    @app.get("/v1/models/{name}")
    async def model(name: str) -> dict[str, Any]:
        return model_object(name)

    @app.post("/v1/chat/completions", response_model=None)
    async def chat(body: ChatRequest) -> JSONResponse | StreamingResponse:
        reply = script_reply(
            body.messages,
            tools=body.tools,
            tool_choice=body.tool_choice,
            parallel_tool_calls=body.parallel_tool_calls,
            response_format=body.response_format,
        )
        stop = [body.stop] if isinstance(body.stop, str) else list(body.stop or [])
        shaped = Shaped.of(
            reply, max_tokens=body.max_completion_tokens or body.max_tokens, stop=stop
        )
        envelope = Envelope(
            completion_id=f"chatcmpl-{uuid.uuid4().hex}",
            model=body.model or model_name,
            created=int(time.time()),
            n=body.n or 1,
            prompt_tokens=sum(
                count_tokens(text_of(m.get("content"))) + 3 for m in body.messages
            ),
        )
        if not body.stream:
            return JSONResponse(completion(shaped, envelope))
        include_usage = bool((body.stream_options or {}).get("include_usage"))

        async def frames() -> AsyncIterator[bytes]:
            chunks = stream_chunks(shaped, envelope, include_usage=include_usage)
            for chunk, is_token in chunks:
                if is_token and token_delay:
                    await asyncio.sleep(token_delay)
                yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
            yield b"data: [DONE]\n\n"

        return StreamingResponse(
            frames(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return app
