"""The gateway's two configurations as LiteLLM reads them, for tests that run
the real proxy on them: the native stack's (``gateway_services`` writes it)
and compose's (its gateway file with the auth and error modules beside it,
including the synced model list).

Each builder returns the config file and the environment LiteLLM gets with
it in that stack.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from lgos_stack.gateway import FOLLOW_TARGET_ENV, gateway_services, litellm_config

REPO = Path(__file__).resolve().parents[3]
MASTER_KEY = "sk-lgos-gateway-master"
UNREACHABLE_API = "http://127.0.0.1:9/v1"
ROUTE = {
    "model_name": "lgos/simple",
    "litellm_params": {
        "model": "openai/simple",
        "api_base": UNREACHABLE_API,
        "api_key": "no-key",
    },
}
GatewayConfig = tuple[Path, dict[str, str]]


def native_config(
    folder: Path,
    api_base_url: str = UNREACHABLE_API,
    routes: Sequence[dict[str, Any]] = (ROUTE,),
) -> GatewayConfig:
    """What ``lgos-demo-stack`` writes, plus the routes the model sync would add."""
    _, gateway = gateway_services(
        state_dir=folder,
        api_base_url=api_base_url,
        litellm_bin=Path("litellm"),
        host="127.0.0.1",
        port=1,
        key=MASTER_KEY,
        after=(),
    )
    config = litellm_config(folder)
    document = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump(document | {"model_list": list(routes)}))
    return config, dict(gateway.env)


def compose_file() -> dict[str, Any]:
    text = (REPO / "compose" / "compose.yaml").read_text()
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


def compose_config(
    folder: Path,
    api_base_url: str | None = None,
    routes: Sequence[dict[str, Any]] = (ROUTE,),
) -> GatewayConfig:
    """compose's /etc/litellm: its gateway file, the modules, the synced list.

    The follow route's target is compose's (the demo API inside the compose
    network), or with ``api_base_url`` that server."""
    compose = compose_file()
    for used in compose["services"]["litellm"]["configs"]:
        source = REPO / "compose" / compose["configs"][used["source"]]["file"]
        shutil.copy(source, folder / Path(used["target"]).name)
    (folder / "synced").mkdir()
    (folder / "synced" / "config.yaml").write_text(
        yaml.safe_dump({"model_list": list(routes)})
    )
    target = compose["services"]["litellm"]["environment"][FOLLOW_TARGET_ENV]
    if api_base_url is not None:
        target = f"{api_base_url}/responses"
    return folder / "config.yaml", {FOLLOW_TARGET_ENV: target}
