"""Checks before anything starts: each problem says what to set or run.

A stack that would fail minutes later (a model provider that does not
answer, a key it refuses, a tool environment never installed) stops here
instead, with every problem listed at once.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence

import httpx
from lgos_demos.settings import DemoSettings
from pydantic import ValidationError

from lgos_stack.services import StackOptions
from lgos_stack.supervisor import Service

_INSTALL = {
    "LiteLLM": "bash scripts/install-litellm.sh",
    "Open WebUI": "bash scripts/install-open-webui.sh",
}
_MODULES = {
    "model sync": "lgos_model_sync",
    "Chainlit": "lgos_chainlit",
    "Open WebUI functions": "lgos_open_webui",
}
_LEAVE_OUT = {
    "LiteLLM": "litellm",
    "Open WebUI": "open-webui",
    "Open WebUI functions": "open-webui",
    "Chainlit": "chainlit",
}


def configuration_problems(
    options: StackOptions,
    services: Sequence[Service],
    environ: Mapping[str, str],
    *,
    timeout: float = 5,
) -> list[str]:
    """What is wrong with the settings and installation, in plain words."""
    problems = _demo_settings_problems(environ)
    if not problems and environ.get("DEMO_MODEL_BASE_URL"):
        problems += _model_provider_problems(environ, timeout)
    if not problems and environ.get("DEMO_FILES_URL"):
        problems += _files_key_problems(environ, timeout)
    names = {service.name for service in services}
    binaries = {
        "LiteLLM": options.litellm_bin,
        "Open WebUI": options.open_webui_bin,
    }
    for name, binary in binaries.items():
        if name in names and not binary.is_file():
            problems.append(
                f"{name} is not installed ({binary} is missing): run "
                f"`{_INSTALL[name]}` (`just up` does), or leave it out with "
                f"--without {_LEAVE_OUT[name]}"
            )
    for name, module in _MODULES.items():
        if name in names and importlib.util.find_spec(module) is None:
            leave_out = _LEAVE_OUT.get(name, "litellm")
            problems.append(
                f"{name} is not installed (no module {module}): run `uv sync` "
                f"in the workspace, or leave it out with --without {leave_out}"
            )
    return problems


def _demo_settings_problems(environ: Mapping[str, str]) -> list[str]:
    settings = {k: v for k, v in environ.items() if k.startswith("DEMO_")}
    try:
        # model_validate reads only these values, not the process environment.
        DemoSettings.model_validate(
            {k.removeprefix("DEMO_"): v for k, v in settings.items()}
        )
    except ValidationError as exc:
        return [
            f"DEMO_{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        ]
    return []


def _model_provider_problems(environ: Mapping[str, str], timeout: float) -> list[str]:
    """A configured model provider must answer ``GET /models`` with our key."""
    url = environ["DEMO_MODEL_BASE_URL"].rstrip("/")
    key = environ.get("DEMO_MODEL_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        response = httpx.get(f"{url}/models", headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        return [
            f"DEMO_MODEL_BASE_URL={url} does not answer ({exc or type(exc).__name__}): "
            "set it to a reachable OpenAI-compatible base URL (ending in /v1), "
            "or unset it to start the offline demo model"
        ]
    if response.status_code in (401, 403):
        if key:
            return [
                f"DEMO_MODEL_BASE_URL={url} refused DEMO_MODEL_API_KEY "
                f"({response.status_code}): set DEMO_MODEL_API_KEY to a key it accepts"
            ]
        return [
            f"DEMO_MODEL_BASE_URL={url} wants an API key "
            f"({response.status_code}): set DEMO_MODEL_API_KEY"
        ]
    return []


def _files_key_problems(environ: Mapping[str, str], timeout: float) -> list[str]:
    """A configured Files API that answers must accept DEMO_FILES_API_KEY as
    a service key (the graphs act for each caller's tenant with it).

    One that does not answer is only a warning's worth: the graphs that
    store files fail, the rest work (the stack starts)."""
    url = environ["DEMO_FILES_URL"].rstrip("/")
    key = environ.get("DEMO_FILES_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    # A service key acts for the owner it names; an owner's key naming one
    # is refused (401), which is what must be caught here.
    headers["X-Lgos-Owner"] = "default"
    try:
        response = httpx.get(f"{url}/files", headers=headers, timeout=timeout)
    except httpx.HTTPError:
        return []
    if response.status_code in (401, 403):
        what = "refused DEMO_FILES_API_KEY" if key else "wants an API key"
        return [
            f"DEMO_FILES_URL={url} {what} ({response.status_code}): "
            "set DEMO_FILES_API_KEY to a service key it accepts "
            "(LGOS_FILES_SERVICE_KEYS)"
        ]
    return []
