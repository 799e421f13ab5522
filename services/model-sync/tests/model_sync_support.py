"""Test helpers: real servers and a real LiteLLM proxy for the sync's tests.

* The LGOS test app — the core library serving three graphs behind a
  bearer-key check like a production deployment's; the registry can change
  while it runs (a graph "removed from LGOS"), and every HTTP exchange it
  serves is recorded (``Exchange``), so a test can see which route a request
  through LiteLLM reached and what LGOS answered.
* ``CatalogServer`` — answers whatever a test sets, for the malformed
  catalogs LGOS itself would never serve.
* ``LiteLLMProxy`` — LiteLLM from ``.tools/litellm``
  (``scripts/install-litellm.sh``), kept offline, restartable.

``ThreadServer``, free ports and the LiteLLM process come from ``lgos_testkit``.

The fixtures that use them are in ``conftest.py``.
"""

from __future__ import annotations

import io
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from fastapi import FastAPI, Request
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph_openai_serve import (
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    LanggraphOpenaiServe,
)
from langgraph_openai_serve.testing import ScriptedChatModel
from lgos_model_sync.cli import run
from lgos_testkit import LiteLLM, free_port, start_litellm
from openai import OpenAI
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

KEY_ENV = "LGOS_MODEL_SYNC_TEST_KEY"
LGOS_KEY = "lgos-test-" + secrets.token_hex(8)
PREFIX = "lgos"

_STARTUP_TIMEOUT = 120.0


# ---------------------------------------------------------------- servers


# ---------------------------------------------------------------- LGOS


class Tuned(ClientSettings):
    """Settings a client may change: they make ``lgos.client_settings``."""

    audience: Literal["general", "beginner", "expert"] = "general"
    use_history: bool = False


def _echo_graph(name: str, context_schema: type[ClientSettings] | None = None) -> Any:
    def reply(messages: list[BaseMessage]) -> AIMessage:
        said = next(
            (m.text for m in reversed(messages) if isinstance(m, HumanMessage)), ""
        )
        return AIMessage(content=f"{name} heard: {said}")

    model = ScriptedChatModel(responder=reply)

    async def answer(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=context_schema)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name=name)


def build_registry() -> GraphRegistry:
    return GraphRegistry(
        registry={
            "echo": GraphConfig(
                graph=_echo_graph("echo"), description="Echoes the last message."
            ),
            # Quoting traps for YAML (a colon, quotes, 'yes', a line break,
            # non-ASCII) and every discovery field, client settings included.
            "tuned": GraphConfig(
                graph=_echo_graph("tuned", Tuned),
                description="Tuned: 'single' \"double\" — yes\nsecond line: on",
                features=frozenset(
                    {GraphFeature.CLIENT_EVENTS, GraphFeature.FILE_INPUTS}
                ),
                server_tools=("web_search",),
                client_tools=("display_file",),
                client_settings=Tuned,
            ),
            "retiring": GraphConfig(
                graph=_echo_graph("retiring"), description="Removed by a test."
            ),
        }
    )


@dataclass
class Exchange:
    """One HTTP request the LGOS test app received and the bytes it answered."""

    method: str
    path: str
    request: bytearray = field(default_factory=bytearray)
    status: int | None = None
    content_type: str = ""
    response: bytearray = field(default_factory=bytearray)

    def request_json(self) -> Any:
        return json.loads(self.request)

    def response_json(self) -> Any:
        return json.loads(self.response)

    def sse_data(self) -> list[Any]:
        """The JSON ``data:`` payloads of a server-sent event stream, in order."""
        return [
            json.loads(line.removeprefix("data:").strip())
            for line in self.response.decode().splitlines()
            if line.startswith("data:") and line.removeprefix("data:").strip()
        ]


class ExchangeRecorder:
    """ASGI middleware appending every HTTP exchange to ``exchanges``.

    Response bytes are recorded before they are sent on, so whatever a client
    has read (through LiteLLM) is already in the record.
    """

    def __init__(self, app: ASGIApp, exchanges: list[Exchange]) -> None:
        self.app = app
        self.exchanges = exchanges

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = Exchange(scope["method"], scope["path"])
        self.exchanges.append(exchange)

        async def recording_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                exchange.request += message.get("body", b"")
            return message

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
                headers = dict(message.get("headers", []))
                exchange.content_type = headers.get(b"content-type", b"").decode()
            elif message["type"] == "http.response.body":
                exchange.response += message.get("body", b"")
            await send(message)

        await self.app(scope, recording_receive, recording_send)


def create_lgos_app(
    registry: GraphRegistry, api_key: str, exchanges: list[Exchange]
) -> FastAPI:
    app = FastAPI()

    @app.middleware("http")
    async def require_key(request: Request, call_next: Any) -> Any:
        # Proves the sync (and LiteLLM) send the deployment's key.
        if request.headers.get("authorization") != f"Bearer {api_key}":
            return JSONResponse({"error": {"message": "bad key"}}, status_code=401)
        return await call_next(request)

    LanggraphOpenaiServe(graphs=registry, app=app).bind_openai_api()
    app.add_middleware(ExchangeRecorder, exchanges=exchanges)
    return app


@dataclass
class LgosServer:
    registry: GraphRegistry
    base_url: str
    api_key: str
    exchanges: list[Exchange] = field(default_factory=list)

    def exchanges_since(self, mark: int) -> list[Exchange]:
        """The exchanges after the first ``mark`` (``len(exchanges)`` earlier)."""
        return self.exchanges[mark:]

    def get(self, path: str) -> Any:
        response = httpx.get(
            self.base_url + path, headers={"Authorization": f"Bearer {self.api_key}"}
        )
        response.raise_for_status()
        return response.json()

    def model_ids(self) -> list[str]:
        return [model["id"] for model in self.get("/models")["data"]]

    def remove(self, model_id: str) -> None:
        self.registry.registry = {
            name: config
            for name, config in self.registry.registry.items()
            if name != model_id
        }


# ---------------------------------------------------------------- catalog


@dataclass
class CatalogServer:
    """Answers ``GET <path>`` with whatever a test put in ``answers``."""

    base_url: str = ""
    answers: dict[str, tuple[int, bytes]] = field(default_factory=dict)

    def serve(self, answers: dict[str, tuple[int, bytes]]) -> None:
        self.answers = answers

    def app(self) -> Starlette:
        async def answer(request: Request) -> Response:
            status, body = self.answers.get(request.url.path, (404, b"{}"))
            return Response(body, status_code=status, media_type="application/json")

        return Starlette(routes=[Route("/{path:path}", answer)])


# ---------------------------------------------------------------- the CLI


@dataclass(frozen=True)
class Outcome:
    """What one in-process run of the command returned and printed."""

    code: int
    out: str
    err: str


def run_cli(*argv: str, environ: dict[str, str] | None = None) -> Outcome:
    """Run ``lgos-model-sync`` in-process; the test key is in its environment."""
    out, err = io.StringIO(), io.StringIO()
    env = {KEY_ENV: LGOS_KEY} if environ is None else environ
    code = run(list(argv), environ=env, stdout=out, stderr=err)
    return Outcome(code, out.getvalue(), err.getvalue())


def deployment_spec(base_url: str, name: str = "main", prefix: str = PREFIX) -> str:
    return f"{name}={prefix},{base_url},{KEY_ENV}"


# ---------------------------------------------------------------- LiteLLM


class LiteLLMProxy:
    """A real LiteLLM proxy process on ``config``; restart to reload it.

    Started by ``lgos_testkit.start_litellm``; restarts append to one log.
    """

    def __init__(self, config: Path, workdir: Path, startups: list[float]) -> None:
        self.config = config
        self.workdir = workdir
        self.port = free_port()
        self.master_key = "sk-lgos-test-" + secrets.token_hex(12)
        self.startups = startups
        self._proxy: LiteLLM | None = None
        self._log = workdir / "litellm.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        started = time.monotonic()
        try:
            self._proxy = start_litellm(
                self.config,
                self.master_key,
                port=self.port,
                log=self._log,
                append_log=True,
                extra_env={KEY_ENV: LGOS_KEY},
                timeout=_STARTUP_TIMEOUT,
            )
        except (RuntimeError, TimeoutError) as error:
            pytest.fail(f"LiteLLM did not start: {error}")
        self.startups.append(time.monotonic() - started)

    def stop(self) -> None:
        if self._proxy is not None:
            self._proxy.process.stop()
            self._proxy = None

    def restart(self) -> None:
        self.stop()
        self.port = free_port()
        self.start()

    def log_tail(self, lines: int = 40) -> str:
        text = self._log.read_text(errors="replace") if self._log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def model_info(self) -> dict[str, dict[str, Any]]:
        """``GET /model/info`` as ``{model_name: model_info}``."""
        response = httpx.get(
            f"{self.url}/model/info",
            headers={"Authorization": f"Bearer {self.master_key}"},
            timeout=10,
        )
        response.raise_for_status()
        return {
            item["model_name"]: item["model_info"] for item in response.json()["data"]
        }

    def openai(self) -> OpenAI:
        return OpenAI(
            base_url=f"{self.url}/v1",
            api_key=self.master_key,
            max_retries=0,
            timeout=30,
        )


def unowned_entry(lgos_base_url: str) -> str:
    """A hand-written entry (with a comment and flow style) no sync owns."""
    return (
        "  - model_name: handwritten/echo   # kept by hand\n"
        "    litellm_params: {model: openai/echo, api_base: "
        f'"{lgos_base_url}", api_key: os.environ/{KEY_ENV}}}\n'
        "    model_info:\n"
        "      note: 'written by a person'\n"
    )


def seed_config(lgos_base_url: str) -> str:
    return (
        "# LiteLLM configuration for the model-sync tests\n"
        "model_list:\n"
        f"{unowned_entry(lgos_base_url)}"
        "\n"
        "litellm_settings:\n"
        "  drop_params: true   # other keys stay as written\n"
        "general_settings:\n"
        "  master_key: os.environ/LITELLM_MASTER_KEY\n"
    )
