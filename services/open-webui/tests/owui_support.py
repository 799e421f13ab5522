"""Open WebUI for the tests, and the client side Open WebUI gives a Function.

``lgos_testkit`` starts the other real servers (uvicorn in a thread, SeaweedFS
and the Files API, LiteLLM).

* ``open_webui``: Open WebUI from ``.tools/open-webui`` with the offline env.
* ``load_function``: the Function file executed the way Open WebUI loads it.
* ``Recorder``: a recording ``__event_emitter__`` / ``__event_call__`` (what
  Open WebUI hands a pipe), answering dialogs with scripted replies.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The stack's offline settings (ARCHITECTURE.md / RECIPES.md): offline, no
# persistent config, no background title/tag/follow-up calls.
import httpx
import yaml
from lgos_stack.gateway import (
    FOLLOW_TARGET_ENV,
    LGOS_KEY_ENV,
    UI_KEYS_ENV,
    install_gateway_modules,
    seed_config,
)
from lgos_stack.webuis import END_USER_ENV, OPEN_WEBUI_OFFLINE_ENV
from lgos_testkit import free_port, lgos_routes, running, wait_until

REPO_ROOT = Path(__file__).resolve().parents[3]
OPEN_WEBUI_BIN = REPO_ROOT / ".tools" / "open-webui" / "bin" / "open-webui"
FUNCTION_FILE = (
    REPO_ROOT / "services/open-webui/src/lgos_open_webui/functions/lgos_responses.py"
)
FILES_BUCKET = "lgos-open-webui-test"
UI_FILES_KEY = "sk-owui-test-files"
"""The Files API's gateway key the Function holds: it acts for each user."""
GRAPH_FILES_KEY = "sk-owui-graph-files"
"""The Files API's service key the graphs hold: it acts for each tenant."""
LITELLM_MASTER_KEY = "sk-owui-test-master"
LITELLM_UI_KEY = "sk-owui-test-ui"
"""LiteLLM's UI key (models and runs only), what the Function and Open
WebUI's connection hold, as in the stack."""
LGOS_GATEWAY_KEY = "sk-owui-test-lgos-gateway"
"""LiteLLM's key to LGOS: a gateway key acting for the users the UIs name."""
GATEWAY = "gateway"
"""Its principal in LGOS and the Files API: user ``u`` is ``gateway.u``."""


@dataclass(frozen=True)
class OpenWebUIServer:
    url: str
    data_dir: Path
    log: Path


@contextlib.contextmanager
def open_webui(
    workdir: Path, openai_url: str, openai_key: str
) -> Iterator[OpenWebUIServer]:
    """Open WebUI (``scripts/install-open-webui.sh``) with LiteLLM as its
    OpenAI connection; yields once ``/health`` answers."""
    if not OPEN_WEBUI_BIN.exists():
        raise RuntimeError(
            f"Open WebUI is missing ({OPEN_WEBUI_BIN}): "
            "run `bash scripts/install-open-webui.sh`"
        )
    data = workdir / "data"
    data.mkdir()
    port = free_port()
    env = {**os.environ, **OPEN_WEBUI_OFFLINE_ENV, **END_USER_ENV}
    env |= {
        "DATA_DIR": str(data),
        "WEBUI_SECRET_KEY": "owui-test-" + uuid.uuid4().hex,
        "OPENAI_API_BASE_URL": openai_url,
        "OPENAI_API_KEY": openai_key,
        # No embedding model is downloaded offline; point RAG at the gateway.
        "RAG_EMBEDDING_ENGINE": "openai",
        "RAG_OPENAI_API_BASE_URL": openai_url,
        "RAG_OPENAI_API_KEY": openai_key,
    }
    log = workdir / "open-webui.log"
    url = f"http://127.0.0.1:{port}"
    with running(
        [OPEN_WEBUI_BIN, "serve", "--host", "127.0.0.1", "--port", str(port)],
        log=log,
        name="Open WebUI",
        env=env,
        cwd=workdir,
        health_url=f"{url}/health",
        timeout=240,
        stop_timeout=30,
    ):
        yield OpenWebUIServer(url=url, data_dir=data, log=log)


def gateway_config(
    folder: Path, lgos_url: str, graphs: list[str]
) -> tuple[Path, dict[str, str]]:
    """LiteLLM on the stack's own seed configuration (its key check, end-user
    forwarding and follow route) with routes to ``graphs`` of the LGOS
    server at ``lgos_url``: the file and LiteLLM's environment."""
    config = folder / "config.yaml"
    seed_config(config)
    install_gateway_modules(config.parent)
    routes = lgos_routes(lgos_url, graphs)
    for route in routes:
        route["litellm_params"]["api_key"] = f"os.environ/{LGOS_KEY_ENV}"
    document = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump(document | {"model_list": routes}))
    return config, {
        FOLLOW_TARGET_ENV: f"{lgos_url}/responses",
        LGOS_KEY_ENV: LGOS_GATEWAY_KEY,
        UI_KEYS_ENV: LITELLM_UI_KEY,
    }


def load_function(path: Path = FUNCTION_FILE) -> types.ModuleType:
    """The Function's source executed in a fresh module, as Open WebUI does."""
    module = types.ModuleType(f"function_lgos_responses_{uuid.uuid4().hex}")
    module.__dict__["__file__"] = str(path)
    sys.modules[module.__name__] = module
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


@dataclass
class Recorder:
    """Stands in for the client side of Open WebUI's socket: records every
    ``__event_emitter__`` event and ``__event_call__`` request, and answers
    each call with the next scripted reply (a value, or a function of the
    call's payload)."""

    replies: list[Any] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    async def call(self, event: dict[str, Any]) -> Any:
        self.calls.append(event)
        if not self.replies:
            return {"error": "Event call timed out."}
        reply = self.replies.pop(0)
        return reply(event) if callable(reply) else reply

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [event["data"] for event in self.events if event["type"] == kind]

    def statuses(self) -> list[str]:
        return [data["description"] for data in self.of_type("status")]


async def chat(
    pipe: Any, recorder: Recorder, model: str, messages: list[Any], **extra: Any
) -> str:
    """One pipe call as Open WebUI makes it for a chat; the streamed text."""
    body = {"model": f"lgos_responses.{model}", "messages": messages, "stream": True}
    parts = [
        text
        async for text in pipe.pipe(
            body,
            __event_emitter__=recorder.emit,
            __event_call__=recorder.call,
            __metadata__={"chat_id": "chat-1"},
            **extra,
        )
    ]
    return "".join(parts)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def stored_reply(http: httpx.Client, message_id: str, timeout: float = 60) -> Any:
    """The assistant message ``message_id`` once Open WebUI stored it as done
    (it saves a chat's messages after the answer streamed)."""
    found: list[Any] = []

    def stored() -> bool:
        chats = http.get("/api/v1/chats/")
        chats.raise_for_status()
        for listed in chats.json():
            chat = http.get(f"/api/v1/chats/{listed['id']}").json()
            message = chat["chat"]["history"]["messages"].get(message_id)
            if message and message.get("done"):
                found.append(message)
                return True
        return False

    wait_until(stored, timeout, f"Open WebUI to store message {message_id}", 0.5)
    return found[0]
