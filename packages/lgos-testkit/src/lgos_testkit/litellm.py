"""A real LiteLLM proxy from the tool env ``.tools/litellm``, kept offline.

``scripts/install-litellm.sh`` makes the tool env; it sits outside the lock,
so the proxy runs as its own process on a config file, like in the stack.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

# The stack's own offline settings, so tests run LiteLLM as `just up` does.
from lgos_stack.gateway import LITELLM_OFFLINE_ENV as LITELLM_OFFLINE_ENV
from lgos_stack.net import LOOPBACK, free_port
from lgos_stack.processes import RunningProcess, start_process

# packages/lgos-testkit/src/lgos_testkit/litellm.py -> the repository root.
REPO_ROOT = Path(__file__).resolve().parents[4]
LITELLM_BIN = REPO_ROOT / ".tools" / "litellm" / "bin" / "litellm"
# No database mode (Prisma cannot start offline) and no stray provider.
_DROPPED_ENV = ("DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")
STARTUP_TIMEOUT = 150.0


def litellm_config(entries: list[dict[str, Any]]) -> str:
    """A config file's text (JSON is YAML) with ``entries`` as its model list
    and the master key read from ``LITELLM_MASTER_KEY``."""
    return json.dumps(
        {
            "model_list": entries,
            "general_settings": {"master_key": "os.environ/LITELLM_MASTER_KEY"},
        },
        indent=1,
    )


def litellm_env(
    master_key: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """This process's environment, offline, with ``master_key`` and ``extra``."""
    env = {**os.environ, **LITELLM_OFFLINE_ENV, "LITELLM_MASTER_KEY": master_key}
    for name in _DROPPED_ENV:
        env.pop(name, None)
    return env | dict(extra or {})


@dataclass(frozen=True)
class LiteLLM:
    """A running proxy: ``url`` is its root (the OpenAI API is ``/v1``)."""

    url: str
    master_key: str
    process: RunningProcess

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def auth(self) -> dict[str, str]:
        """Headers with the master key."""
        return {"Authorization": f"Bearer {self.master_key}"}


def start_litellm(
    config: Path,
    master_key: str,
    *,
    port: int | None = None,
    log: Path | None = None,
    append_log: bool = False,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = STARTUP_TIMEOUT,
) -> LiteLLM:
    """Start the proxy on ``config`` and return once ``/health/liveliness``
    answers; stop it yourself (``proxy.process.stop()``).

    It runs in the config's folder; the log defaults to the config's path
    with ``.log``. A missing tool env is a ``RuntimeError`` naming the script.
    """
    if not LITELLM_BIN.exists():
        raise RuntimeError(
            f"LiteLLM's tool environment is missing ({LITELLM_BIN}): "
            "run `bash scripts/install-litellm.sh` first"
        )
    if not config.is_file():
        raise FileNotFoundError(f"LiteLLM config {config} does not exist")
    port = free_port() if port is None else port
    command: list[str | os.PathLike[str]] = [LITELLM_BIN, "--config", config]
    command += ["--host", LOOPBACK, "--port", str(port)]
    process = start_process(
        command,
        log=log or config.with_suffix(".log"),
        name="LiteLLM",
        env=litellm_env(master_key, extra_env),
        cwd=config.parent,
        append=append_log,
    )
    url = f"http://{LOOPBACK}:{port}"
    try:
        process.wait_healthy(f"{url}/health/liveliness", timeout)
    except BaseException:
        process.stop()
        raise
    return LiteLLM(url=url, master_key=master_key, process=process)


@contextlib.contextmanager
def litellm(
    config: Path,
    master_key: str,
    *,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = STARTUP_TIMEOUT,
) -> Iterator[LiteLLM]:
    """The proxy on ``config`` for the ``with`` block (see ``start_litellm``)."""
    proxy = start_litellm(config, master_key, extra_env=extra_env, timeout=timeout)
    try:
        yield proxy
    finally:
        proxy.process.stop()


def lgos_routes(
    lgos_url: str, graphs: Iterable[str], prefix: str = "lgos"
) -> list[dict[str, Any]]:
    """Config entries routing ``<prefix>/<graph>`` to the LGOS server at
    ``lgos_url`` (its OpenAI base URL, ``.../v1``), each with ``model_info.lgos``
    copied from ``GET /models/{graph}`` as the model-sync job writes it."""
    entries = []
    for graph in graphs:
        response = httpx.get(f"{lgos_url}/models/{graph}", timeout=30)
        response.raise_for_status()
        entries.append(
            {
                "model_name": f"{prefix}/{graph}",
                "litellm_params": {
                    "model": f"openai/{graph}",
                    "api_base": lgos_url,
                    "api_key": "no-key",
                },
                "model_info": {"lgos": response.json()["lgos"]},
            }
        )
    return entries
