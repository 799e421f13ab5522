"""Real servers for the tests, and the client side Open WebUI gives a Function.

* ``ThreadServer``: uvicorn serving an ASGI app (the demo model, the demo
  search, the demo API) from a thread.
* ``seaweedfs`` + ``files_api``: the real Files API on real S3.
* ``litellm``: LiteLLM from ``.tools/litellm``, offline, on a config file.
* ``open_webui``: Open WebUI from ``.tools/open-webui`` with the offline env.
* ``load_function``: the Function file executed the way Open WebUI loads it.
* ``Recorder``: a recording ``__event_emitter__`` / ``__event_call__`` (what
  Open WebUI hands a pipe), answering dialogs with scripted replies.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import types
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

REPO_ROOT = Path(__file__).resolve().parents[3]
LITELLM_BIN = REPO_ROOT / ".tools" / "litellm" / "bin" / "litellm"
OPEN_WEBUI_BIN = REPO_ROOT / ".tools" / "open-webui" / "bin" / "open-webui"
FUNCTION_FILE = (
    REPO_ROOT / "services/open-webui/src/lgos_open_webui/functions/lgos_responses.py"
)
S3_ACCESS_KEY = "owui-test-access"
S3_SECRET_KEY = "owui-test-secret-key"
UI_FILES_KEY = "sk-owui-test-files"
GRAPH_FILES_KEY = "sk-owui-graph-files"
LITELLM_MASTER_KEY = "sk-owui-test-master"
LITELLM_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_MODE": "PRODUCTION",
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
}
# ARCHITECTURE.md / RECIPES.md: offline, no persistent config, no background
# title/tag/follow-up calls.
OPEN_WEBUI_ENV = {
    "OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "WEBUI_AUTH": "False",
    "ENABLE_OLLAMA_API": "False",
    "ENABLE_PERSISTENT_CONFIG": "False",
    "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "False",
    "RAG_RERANKING_MODEL_AUTO_UPDATE": "False",
    "WHISPER_MODEL_AUTO_UPDATE": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "true",
    "SCARF_NO_ANALYTICS": "true",
    "ENABLE_TITLE_GENERATION": "False",
    "ENABLE_TAGS_GENERATION": "False",
    "ENABLE_FOLLOW_UP_GENERATION": "False",
}


def free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise TimeoutError(f"timed out waiting for {what}")


def stop(process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Stop one process we started, by its handle."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class ThreadServer:
    """uvicorn serving an ASGI app on a free loopback port, in a thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_ports(1)[0]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        wait_until(lambda: self.server.started, 20, "uvicorn")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def _healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> bool:
    if process.poll() is not None:
        raise RuntimeError(f"{url}: the process exited:\n{log.read_text()[-3000:]}")
    try:
        return httpx.get(url, timeout=2).is_success
    except httpx.TransportError:
        return False


@contextlib.contextmanager
def seaweedfs(root: Path) -> Iterator[str]:
    """``weed mini`` on loopback ports inside ``root``; yields the S3 URL."""
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    for name in ("log", "data", "tmp"):
        (root / name).mkdir()
    flags = [
        "s3.port",
        "s3.port.grpc",
        "master.port",
        "master.port.grpc",
        "volume.port",
        "volume.port.grpc",
        "filer.port",
        "filer.port.grpc",
        "admin.port",
        "admin.port.grpc",
    ]
    ports = dict(zip(flags, free_ports(len(flags)), strict=True))
    command = [
        weed,
        f"-logdir={root / 'log'}",
        "mini",
        f"-dir={root / 'data'}",
        "-ip=127.0.0.1",
        "-ip.bind=127.0.0.1",
        "-master.telemetry=false",
        "-webdav=false",
        "-admin.ui=false",
        "-s3.port.iceberg=0",
        "-s3.port.lance=0",
        f"-s3.localSocket={root / 's3.sock'}",
        f"-filer.localSocket={root / 'filer.sock'}",
        "-idleTimeout=3",
        *(f"-{flag}={port}" for flag, port in ports.items()),
    ]
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
        "TMPDIR": str(root / "tmp"),
    }
    with (root / "weed.out").open("wb") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root
        )
    try:
        yield f"http://127.0.0.1:{ports['s3.port']}"
    finally:
        stop(process, timeout=30)


@contextlib.contextmanager
def files_api(s3_url: str, log: Path) -> Iterator[str]:
    """The Files API on ``s3_url``; two keys of one owner. Yields ``.../v1``."""
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_FILES_")}
    env |= {
        "LGOS_FILES_S3_ENDPOINT": s3_url,
        "LGOS_FILES_S3_BUCKET": "lgos-open-webui-test",
        "LGOS_FILES_S3_ACCESS_KEY": S3_ACCESS_KEY,
        "LGOS_FILES_S3_SECRET_KEY": S3_SECRET_KEY,
        "LGOS_FILES_API_KEYS": json.dumps(
            {UI_FILES_KEY: "chat", GRAPH_FILES_KEY: "chat"}
        ),
    }
    command = [sys.executable, "-m", "lgos_files_api", "--host=127.0.0.1"]
    command += [f"--port={port}", "--log-level=warning"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=out)
    try:
        health = f"http://127.0.0.1:{port}/health"
        wait_until(lambda: _healthy(health, process, log), 30, "the Files API")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(process)


@contextlib.contextmanager
def litellm(entries: list[dict[str, Any]], workdir: Path) -> Iterator[str]:
    """A real LiteLLM proxy on a config with ``entries``; yields its root URL."""
    if not LITELLM_BIN.exists():
        raise RuntimeError(
            f"LiteLLM is missing ({LITELLM_BIN}): run `bash scripts/install-litellm.sh`"
        )
    config = workdir / "litellm.yaml"
    config.write_text(
        json.dumps(
            {
                "model_list": entries,
                "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
            }
        )
    )
    port = free_ports(1)[0]
    env = {
        **os.environ,
        **LITELLM_OFFLINE_ENV,
        "LITELLM_MASTER_KEY": LITELLM_MASTER_KEY,
    }
    for name in ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    log = workdir / "litellm.log"
    command = [str(LITELLM_BIN), "--config", str(config)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        live = f"{url}/health/liveliness"
        wait_until(lambda: _healthy(live, process, log), 150, "LiteLLM")
        yield url
    finally:
        stop(process)


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
    port = free_ports(1)[0]
    env = {**os.environ, **OPEN_WEBUI_ENV}
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
    command = [str(OPEN_WEBUI_BIN), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _healthy(f"{url}/health", process, log), 240, "Open WebUI")
        yield OpenWebUIServer(url=url, data_dir=data, log=log)
    finally:
        stop(process, timeout=30)


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
