"""The stack's two chat UIs, both routed through LiteLLM.

    Chainlit     python -m lgos_chainlit   (catalog from LiteLLM's /model/info,
                 files through the Files API; home in {state_dir}/chainlit)
    Open WebUI   .tools/open-webui/bin/open-webui serve (offline settings,
                 data in {state_dir}/open-webui)
    Open WebUI functions  python -m lgos_open_webui (one-shot, once Open WebUI
                 is healthy: installs the LGOS Functions, valves set to
                 LiteLLM, the Files API and Open WebUI's own address)

Both hold LiteLLM's UI key (models and runs, no administration) and the
Files API's gateway key, and name their signed-in user in
``x-lgos-end-user``: each user is an LGOS tenant of their own.

Open WebUI runs with persistent config off, so what is set here wins over
anything saved in its database; login is off (a local demo), and title, tag
and follow-up generation are off (each would be an extra model call per
chat). Its embeddings go to LiteLLM, so it never downloads a local model.

Each graph is listed once: through the LGOS Function, which speaks the
Responses API and so carries every feature, except the graphs the operator
names in ``OPEN_WEBUI_PLAIN_MODELS``, which Open WebUI's own OpenAI
connection lists instead (and the Function leaves out).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from lgos_stack.gateway import generated_secret
from lgos_stack.net import reachable
from lgos_stack.supervisor import Service

DEFAULT_CHAINLIT_PORT = 8200
DEFAULT_OPEN_WEBUI_PORT = 8080
OPEN_WEBUI_OFFLINE_ENV = {
    "OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "ENABLE_OLLAMA_API": "False",
    "ENABLE_PERSISTENT_CONFIG": "False",
    "ENABLE_VERSION_UPDATE_CHECK": "False",
    "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "False",
    "RAG_RERANKING_MODEL_AUTO_UPDATE": "False",
    "WHISPER_MODEL_AUTO_UPDATE": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "true",
    "SCARF_NO_ANALYTICS": "true",
    "ENABLE_TITLE_GENERATION": "False",
    "ENABLE_TAGS_GENERATION": "False",
    "ENABLE_FOLLOW_UP_GENERATION": "False",
    "WEBUI_AUTH": "False",
}
END_USER_ENV = {
    # Open WebUI's own connection names its signed-in user in the header
    # LiteLLM forwards and LGOS's gateway key acts for (the LGOS Function
    # sends the same header itself): each user is an LGOS tenant.
    "ENABLE_FORWARD_USER_INFO_HEADERS": "True",
    "FORWARD_USER_INFO_HEADER_USER_ID": "X-Lgos-End-User",
}


FUNCTION_ID = "lgos_responses"
"""The LGOS Function's id in Open WebUI (its file name in lgos_open_webui);
its models are ``lgos_responses.<model>``."""
FIRST_GRAPH = "lgos/citations"
"""The model a new chat starts on: the README's first try."""
PROMPT_SUGGESTIONS = [
    {
        "title": ["Ask the docs", "an answer with cited sources"],
        "content": "How do I upload files to the Files API?",
    },
    {
        "title": ["Follow the progress", "status lines while it searches"],
        "content": "How does the Files API keep its promises?",
    },
    {
        "title": ["Try a paused run", "pick LGOS · lgos/interrupts first"],
        "content": "Refund order 5150, it arrived broken",
    },
]
"""The welcome screen's suggestions: questions the demo graphs answer."""


def plain_models(value: str | None) -> tuple[str, ...]:
    """The comma-separated ``OPEN_WEBUI_PLAIN_MODELS`` as a tuple."""
    return tuple(name.strip() for name in (value or "").split(",") if name.strip())


def model_choice_env(plain: Sequence[str]) -> dict[str, str]:
    """Open WebUI's settings that list each graph once and start on the first.

    Without plain models the OpenAI connection is switched off: LiteLLM
    lists the same graphs the Function does. With some, the connection
    lists exactly those (``model_ids``), so Open WebUI never asks LiteLLM
    for the rest.
    """
    if plain:
        connection = {
            "OPENAI_API_CONFIGS": json.dumps(
                {"0": {"enable": True, "model_ids": list(plain)}}
            )
        }
    else:
        connection = {"ENABLE_OPENAI_API": "False"}
    first = FIRST_GRAPH if FIRST_GRAPH in plain else f"{FUNCTION_ID}.{FIRST_GRAPH}"
    return {
        **connection,
        "DEFAULT_MODELS": first,
        "DEFAULT_PROMPT_SUGGESTIONS": json.dumps(
            PROMPT_SUGGESTIONS, ensure_ascii=False
        ),
    }


def chainlit_service(
    *,
    state_dir: Path,
    host: str,
    port: int,
    gateway_url: str,
    gateway_key: str,
    files_url: str | None,
    files_key: str | None,
    after: tuple[str, ...],
) -> Service:
    """The Chainlit UI against LiteLLM (``gateway_url`` ends in ``/v1``)."""
    env = {
        "LGOS_CHAINLIT_GATEWAY_URL": gateway_url,
        "LGOS_CHAINLIT_GATEWAY_KEY": gateway_key,
        "LGOS_CHAINLIT_CATALOG": "litellm",
        "LGOS_CHAINLIT_HOME": str(state_dir / "chainlit"),
    }
    if files_url:
        env["LGOS_CHAINLIT_FILES_URL"] = files_url
        env["LGOS_CHAINLIT_FILES_KEY"] = files_key or "no-key"
    base = f"http://{reachable(host)}:{port}"
    return Service(
        name="Chainlit",
        argv=[
            sys.executable,
            "-m",
            "lgos_chainlit",
            f"--host={host}",
            f"--port={port}",
            f"--home={state_dir / 'chainlit'}",
        ],
        port=port,
        url=f"http://{host}:{port}",
        health_url=base,
        env=env,
        after=after,
    )


def open_webui_services(
    *,
    state_dir: Path,
    open_webui_bin: Path,
    host: str,
    port: int,
    gateway_url: str,
    gateway_key: str,
    files_url: str | None,
    files_key: str | None,
    after: tuple[str, ...],
    plain: Sequence[str] = (),
) -> list[Service]:
    """Open WebUI against LiteLLM, then the one-shot installing LGOS's Functions.

    ``plain`` names the graphs Open WebUI's own connection lists; the
    Function offers every other one.
    """
    data = state_dir / "open-webui"
    data.mkdir(parents=True, exist_ok=True)
    base = f"http://{reachable(host)}:{port}"
    open_webui = Service(
        name="Open WebUI",
        argv=[str(open_webui_bin), "serve", f"--host={host}", f"--port={port}"],
        port=port,
        url=f"http://{host}:{port}",
        health_url=f"{base}/health",
        env={
            **OPEN_WEBUI_OFFLINE_ENV,
            **END_USER_ENV,
            "DATA_DIR": str(data),
            "WEBUI_SECRET_KEY": generated_secret(data / "secret-key"),
            "OPENAI_API_BASE_URL": gateway_url,
            "OPENAI_API_KEY": gateway_key,
            "RAG_EMBEDDING_ENGINE": "openai",
            "RAG_OPENAI_API_BASE_URL": gateway_url,
            "RAG_OPENAI_API_KEY": gateway_key,
            # An attachment goes to the model whole: LiteLLM serves no
            # embedding model, and the LGOS Function reads files itself.
            "BYPASS_EMBEDDING_AND_RETRIEVAL": "True",
            **model_choice_env(plain),
        },
        after=after,
    )
    functions_env = {
        "LGOS_OPEN_WEBUI_GATEWAY_URL": gateway_url,
        "LGOS_OPEN_WEBUI_GATEWAY_KEY": gateway_key,
        "LGOS_OPEN_WEBUI_SKIP_MODELS": ",".join(plain),
    }
    if files_url:
        functions_env["LGOS_OPEN_WEBUI_FILES_URL"] = files_url
        functions_env["LGOS_OPEN_WEBUI_FILES_KEY"] = files_key or "no-key"
    functions = Service(
        name="Open WebUI functions",
        # With WEBUI_AUTH=False it signs in as Open WebUI's no-auth admin.
        argv=[sys.executable, "-m", "lgos_open_webui", f"--url={base}"],
        port=None,
        url="(one-shot: installs the LGOS Functions into Open WebUI)",
        env=functions_env,
        after=(open_webui.name,),
        oneshot=True,
    )
    return [open_webui, functions]
