"""``lgos serve``: run a graph registry behind the OpenAI API with uvicorn.

    LGOS_REGISTRY=my_project.graphs:registry lgos serve --port 8000

Every flag has an ``LGOS_*`` environment equivalent (flags win). The
registry attribute is a ``GraphRegistry`` or a callable returning one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence

import uvicorn
from fastapi import FastAPI
from pydantic import ValidationError

from langgraph_openai_serve.backends.choice import backend_for, postgres_backend
from langgraph_openai_serve.graph.registry import GraphRegistry
from langgraph_openai_serve.logs import configure_logging
from langgraph_openai_serve.observability.exposition import MULTIPROCESS_ENV
from langgraph_openai_serve.operations.drain import drain_on_sigterm
from langgraph_openai_serve.operations.health_port import HealthPortError
from langgraph_openai_serve.responses.retention import delete_expired
from langgraph_openai_serve.server import LanggraphOpenaiServe
from langgraph_openai_serve.settings import Settings
from langgraph_openai_serve.worker import run_worker

_FLAGS = {
    "registry": "LGOS_REGISTRY",
    "host": "LGOS_HOST",
    "port": "LGOS_PORT",
    "workers": "LGOS_WORKERS",
    "prefix": "LGOS_OPENAI_API_PREFIX",
    "shutdown_timeout": "LGOS_SHUTDOWN_TIMEOUT",
    "drain_delay": "LGOS_DRAIN_DELAY",
    "log_format": "LGOS_LOG_FORMAT",
}


WORKER_HEALTHCHECK_SECONDS = 120
"""How long ``lgos serve --workers N`` waits for a worker to answer."""


class RegistryLoadError(RuntimeError):
    """``LGOS_REGISTRY`` does not name a usable registry."""


def load_registry(spec: str | None) -> GraphRegistry:
    """Import ``module:attribute`` and return the registry it names."""
    if not spec or ":" not in spec:
        raise RegistryLoadError(
            "Set LGOS_REGISTRY (or --registry) to 'module:attribute', e.g. "
            "'my_project.graphs:registry'."
        )
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RegistryLoadError(f"Cannot import {module_name!r}: {exc}") from exc
    try:
        target = getattr(module, attribute)
    except AttributeError:
        raise RegistryLoadError(
            f"{module_name!r} has no attribute {attribute!r}"
        ) from None
    registry = (
        target()
        if callable(target) and not isinstance(target, GraphRegistry)
        else target
    )
    if not isinstance(registry, GraphRegistry):
        raise RegistryLoadError(
            f"{spec} is a {type(registry).__name__}, not a GraphRegistry"
        )
    return registry


def create_app() -> FastAPI:
    """The app each uvicorn worker serves, configured from the environment."""
    settings = Settings()
    configure_logging(settings.LOG_FORMAT, settings.LOG_LEVEL)
    registry = load_registry(settings.REGISTRY)
    server = LanggraphOpenaiServe(graphs=registry, settings=settings)
    app = server.bind_openai_api().app
    drain_on_sigterm(app, server.lifecycle, settings.DRAIN_DELAY)
    return app


def _bound_server() -> LanggraphOpenaiServe:
    settings = Settings()
    configure_logging(settings.LOG_FORMAT, settings.LOG_LEVEL)
    registry = load_registry(settings.REGISTRY)
    return LanggraphOpenaiServe(graphs=registry, settings=settings).bind_openai_api()


async def setup_database() -> None:
    """Create (or migrate) everything the PostgreSQL backend keeps: LGOS's
    tables, procrastinate's schema and the checkpoint tables of durable
    background runs."""
    backend = postgres_backend(Settings(), "lgos db-setup")
    try:
        await backend.setup()
    finally:
        await backend.close()


async def cleanup_responses() -> int:
    """Delete the kept Responses older than ``LGOS_RESPONSE_RETENTION`` from
    the PostgreSQL store; return how many."""
    settings = Settings()
    if settings.RESPONSE_STORE != "postgres":
        raise SystemExit(
            "lgos responses-cleanup: LGOS_RESPONSE_STORE is not 'postgres' (a "
            "memory store lives in its server, which cleans it every hour)."
        )
    backend = backend_for(settings)
    try:
        return await delete_expired(backend.responses, settings.RESPONSE_RETENTION)
    finally:
        await backend.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lgos", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a registry over HTTP")
    serve.add_argument("--registry", help="module:attribute of a GraphRegistry")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)
    serve.add_argument("--prefix", help="where the OpenAI routes mount (/v1)")
    serve.add_argument(
        "--shutdown-timeout",
        type=int,
        help="seconds in-flight streams get to finish on shutdown",
    )
    serve.add_argument(
        "--drain-delay",
        type=float,
        help="seconds to keep serving, not-ready, after SIGTERM",
    )
    serve.add_argument("--log-format", choices=["json", "text"])
    worker = commands.add_parser(
        "worker", help="run background Responses from the PostgreSQL queue"
    )
    worker.add_argument("--registry", help="module:attribute of a GraphRegistry")
    worker.add_argument(
        "--health-port",
        type=int,
        help="serve /health/live and /health/ready on this port "
        "(LGOS_WORKER_HEALTH_PORT)",
    )
    commands.add_parser(
        "db-setup",
        help="create or migrate the response tables (before API and workers)",
    )
    commands.add_parser(
        "responses-cleanup",
        help="delete kept Responses older than LGOS_RESPONSE_RETENTION",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "db-setup":
        asyncio.run(setup_database())
        return
    if args.command == "responses-cleanup":
        deleted = asyncio.run(cleanup_responses())
        sys.stdout.write(f"deleted {deleted} expired responses\n")
        return
    if args.command == "worker":
        if args.registry:
            os.environ["LGOS_REGISTRY"] = args.registry
        if args.health_port is not None:
            os.environ["LGOS_WORKER_HEALTH_PORT"] = str(args.health_port)
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(run_worker(_bound_server().services))
        except HealthPortError as exc:
            sys.stderr.write(f"lgos worker: {exc}\n")
            raise SystemExit(1) from None
        return
    # Workers are separate processes that build their app from the
    # environment, so flags travel as LGOS_* variables.
    for flag, variable in _FLAGS.items():
        value = getattr(args, flag)
        if value is not None:
            os.environ[variable] = str(value)
    try:
        settings = Settings()
        load_registry(settings.REGISTRY)  # fail here, before binding the port
    except (RegistryLoadError, ValidationError) as exc:
        sys.stderr.write(f"lgos serve: {exc}\n")
        raise SystemExit(2) from None
    configure_logging(settings.LOG_FORMAT, settings.LOG_LEVEL)
    with shared_metrics(settings):
        uvicorn.run(
            "langgraph_openai_serve.cli:create_app",
            factory=True,
            host=settings.HOST,
            port=settings.PORT,
            workers=settings.WORKERS,
            timeout_graceful_shutdown=settings.SHUTDOWN_TIMEOUT,
            # A spawned worker imports LangGraph before it can answer the
            # supervisor's pings: uvicorn's 5 s default killed every worker
            # during its start on a busy machine, over and over.
            timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
            access_log=False,  # LGOS logs one structured line per request itself
            log_config=None,
        )


@contextlib.contextmanager
def shared_metrics(settings: Settings) -> Iterator[None]:
    """With several workers, one folder where each writes its metrics, so a
    scrape of any of them reports all (prometheus-client's multiprocess
    mode). A folder named by ``PROMETHEUS_MULTIPROC_DIR`` is used and its
    files from an earlier run removed; otherwise a temporary one lives as
    long as the server."""
    if settings.WORKERS == 1 or not settings.METRICS_ENABLED:
        yield
        return
    named = os.environ.get(MULTIPROCESS_ENV)
    folder = named or tempfile.mkdtemp(prefix="lgos-metrics-")
    os.makedirs(folder, exist_ok=True)
    for stale in glob.glob(os.path.join(folder, "*.db")):
        os.remove(stale)
    os.environ[MULTIPROCESS_ENV] = folder  # the workers inherit it
    try:
        yield
    finally:
        if named is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
