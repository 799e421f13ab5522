"""The db-setup Job and the gate the API and worker pods wait at, run here
as their manifests say against a real PostgreSQL."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
from deploy_support import Rendered, local_command


def _gate(
    base: Rendered, deployment: str, url: str, scratch: Path, timeout: str
) -> subprocess.CompletedProcess[str]:
    workload = base.get("Deployment", deployment)
    argv, env = local_command(
        base,
        workload,
        "wait-for-schema",
        scratch,
        LGOS_DATABASE_URL=url,
        LGOS_SCHEMA_WAIT_TIMEOUT=timeout,
    )
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def test_the_job_sets_up_the_queue_the_store_and_the_checkpoints(
    set_up_database: str,
) -> None:
    with psycopg.connect(set_up_database) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            )
        }
    assert {
        "procrastinate_jobs",
        "lgos_background_responses",
        "checkpoints",
        "lgos_schema_setups",
    } <= tables


def test_pods_pass_the_gate_once_the_job_marked_their_version(
    base: Rendered, set_up_database: str, tmp_path: Path
) -> None:
    for deployment in ("lgos-api", "lgos-worker"):
        result = _gate(base, deployment, set_up_database, tmp_path, "30")

        assert result.returncode == 0, result.stderr
        assert "is ready" in result.stdout


def test_pods_wait_at_the_gate_before_the_setup(
    base: Rendered, empty_database: str, tmp_path: Path
) -> None:
    result = _gate(base, "lgos-api", empty_database, tmp_path, "0")

    assert result.returncode == 1
    assert "waiting for the db-setup Job of LGOS" in result.stdout


def test_pods_of_a_newer_version_wait_for_its_own_setup(
    base: Rendered, empty_database: str, tmp_path: Path
) -> None:
    # An upgrade: the database holds the mark of the running (older) version
    # only; the new image's pods wait for the new setup.
    with psycopg.connect(empty_database, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE lgos_schema_setups (lgos_version text PRIMARY KEY,"
            " finished_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute("INSERT INTO lgos_schema_setups VALUES ('0.0.1-older')")

    result = _gate(base, "lgos-worker", empty_database, tmp_path, "0")

    assert result.returncode == 1
    assert "waiting for the db-setup Job" in result.stdout
