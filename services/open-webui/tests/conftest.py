"""Session fixtures: the demo graphs behind a real LiteLLM, the real Files API
on SeaweedFS, a real Open WebUI, and the Function loaded as Open WebUI loads it.

* The demo API is the demos' own registry (offline demo model and search,
  in-process servers) served by the core library with
  ``CHAT_STATUS_AS_REASONING`` on, so one server covers the Function's
  Responses streams and the plain Chat Completions connection.
* One graph is added to it: ``approvals`` presents its pause as an MCP
  approval request (``interrupt_protocol="mcp_approval"``).
* LiteLLM runs on the stack's own configuration (``gateway_config``) and
  routes ``lgos/<graph>`` to it, with ``model_info.lgos`` copied from
  ``GET /v1/models/{graph}`` as the model-sync job writes it.
* Keys as in the stack: the Function and Open WebUI's connection hold
  LiteLLM's UI key and the Files API's gateway key and name their user in
  ``x-lgos-end-user``; LiteLLM holds LGOS's gateway key, the graphs the Files
  API's service key, so each user is a tenant (``gateway.<user>``) in both.
* Open WebUI runs with LiteLLM as its OpenAI connection (one per session,
  ~30-60 s to start); the sync tests install the Function into it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import interrupt
from langgraph_openai_serve import (
    GraphConfig,
    GraphFeature,
    InMemoryRunCoordinator,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_demos.demo_model.app import create_app as create_demo_model
from lgos_demos.registry import build_demo_registry
from lgos_demos.search.app import create_app as create_search
from lgos_demos.settings import DemoSettings
from lgos_open_webui.cli import run
from lgos_testkit import ThreadServer, files_api_on_seaweedfs, litellm
from owui_support import (
    FILES_BUCKET,
    GATEWAY,
    GRAPH_FILES_KEY,
    LGOS_GATEWAY_KEY,
    LITELLM_MASTER_KEY,
    LITELLM_UI_KEY,
    UI_FILES_KEY,
    OpenWebUIServer,
    Recorder,
    gateway_config,
    load_function,
    open_webui,
)

GRAPHS = (
    "simple",
    "citations",
    "interrupts",
    "file-display",
    "server-tools",
    "approvals",
    "background",
)
APPROVAL = {"question": "Refund order 42 (19.90 EUR)?", "amount": "19.90 EUR"}


def _approval_graph() -> Any:
    async def refund(state: MessagesState) -> dict[str, Any]:
        approved = interrupt(APPROVAL)
        return {"messages": [AIMessage(content=f"Refunded {approved['amount']}.")]}

    builder = StateGraph(MessagesState)
    builder.add_node("refund", refund)
    builder.add_edge(START, "refund")
    builder.add_edge("refund", END)
    return builder.compile(checkpointer=InMemorySaver())


@dataclass(frozen=True)
class Stack:
    lgos_url: str
    """The demo API's OpenAI base URL (``.../v1``)."""
    gateway_url: str
    """LiteLLM's OpenAI base URL (``.../v1``)."""
    files_url: str
    requests: list[tuple[str, str]]
    """Every ``(method, path)`` the demo API served, in order."""


@pytest.fixture(scope="session")
def files_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = {
        "SERVICE_KEYS": json.dumps([GRAPH_FILES_KEY]),
        "GATEWAY_KEYS": json.dumps({UI_FILES_KEY: GATEWAY}),
    }
    with files_api_on_seaweedfs(
        tmp_path_factory.mktemp("seaweed"),
        bucket=FILES_BUCKET,
        keys={"sk-owui-test-nobody": "nobody"},
        settings=settings,
    ) as api:
        yield api.openai_url


def _demo_api(settings: DemoSettings, seen: list[tuple[str, str]]) -> FastAPI:
    demo = build_demo_registry(settings)
    demo.registry.register(
        "approvals",
        GraphConfig(
            graph=_approval_graph(),
            description="Refunds once approved.",
            features={GraphFeature.INTERRUPTS},
            run_coordinator=InMemoryRunCoordinator(),
            interrupt_protocol="mcp_approval",
        ),
    )
    app = FastAPI(title="LGOS demo API (status as reasoning)")

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        seen.append((request.method, request.url.path))
        return await call_next(request)

    serve = Settings(
        CHAT_STATUS_AS_REASONING=True,
        GATEWAY_KEYS=json.dumps({LGOS_GATEWAY_KEY: GATEWAY}),
    )
    LanggraphOpenaiServe(
        graphs=demo.registry, app=app, settings=serve
    ).bind_openai_api()
    return app


@pytest.fixture(scope="session")
def stack(files_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    model_app = create_demo_model(model_name="lgos-demo-model", token_delay=0)
    with ThreadServer(model_app) as model, ThreadServer(create_search()) as search:
        settings = DemoSettings(
            MODEL_BASE_URL=f"{model.url}/v1",
            SEARCH_URL=search.url,
            FILES_URL=files_url,
            FILES_API_KEY=GRAPH_FILES_KEY,
            MODEL_TOKEN_DELAY=0,
        )
        seen: list[tuple[str, str]] = []
        with ThreadServer(_demo_api(settings, seen)) as api:
            lgos_url = f"{api.url}/v1"
            config, env = gateway_config(
                tmp_path_factory.mktemp("litellm"), lgos_url, list(GRAPHS)
            )
            with litellm(config, LITELLM_MASTER_KEY, extra_env=env) as gateway:
                yield Stack(lgos_url, gateway.openai_url, files_url, seen)


@pytest.fixture(scope="session")
def function_module() -> ModuleType:
    return load_function()


@pytest.fixture
def pipe(function_module: ModuleType, stack: Stack) -> Any:
    """The Function's Pipe with its valves pointing at the test stack."""
    instance = function_module.Pipe()
    instance.valves = function_module.Pipe.Valves(
        gateway_url=stack.gateway_url,
        gateway_key=LITELLM_UI_KEY,
        files_url=stack.files_url,
        files_key=UI_FILES_KEY,
    )
    return instance


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="session")
def owui(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OpenWebUIServer]:
    with open_webui(
        tmp_path_factory.mktemp("open-webui"), stack.gateway_url, LITELLM_UI_KEY
    ) as server:
        yield server


@pytest.fixture(scope="session")
def admin_token(owui: OpenWebUIServer) -> str:
    response = httpx.post(
        f"{owui.url}/api/v1/auths/signin", json={"email": "-", "password": "-"}
    )
    response.raise_for_status()
    token: str = response.json()["token"]
    return token


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str


SyncCli = Callable[..., Outcome]


@pytest.fixture
def sync_cli() -> SyncCli:
    """Run ``lgos-open-webui-sync`` in-process with an empty environment."""

    def invoke(*argv: str, environ: dict[str, str] | None = None) -> Outcome:
        out, err = io.StringIO(), io.StringIO()
        code = run(list(argv), environ=environ or {}, stdout=out, stderr=err)
        return Outcome(code, out.getvalue(), err.getvalue())

    return invoke
