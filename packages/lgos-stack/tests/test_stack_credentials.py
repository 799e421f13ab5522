"""The native stack's PostgreSQL and S3 take only credentials generated for
that stack: every process and user of the machine can reach their loopback
ports, so neither trusts a connection nor takes a key known in advance."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from lgos_stack.files import file_services, s3_credentials
from lgos_stack.net import free_port, free_ports
from lgos_stack.postgres import cluster_password, database_url, password_file
from lgos_testkit import STARTUP_SECONDS, running, start_process, wait_until
from lgos_testkit.stack import postgres_dir

# What every native stack used before: anyone who read the source had them.
FORMER_S3_KEYS = ("lgos-demo-access", "lgos-demo-secret-key")


@pytest.fixture
def cluster() -> Iterator[Path]:
    """A folder for one cluster (as root, outside pytest's private tmp)."""
    folder = postgres_dir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _connects(url: str) -> bool | str:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as exc:
        return str(exc)
    return True


def _postgres(data: Path, port: int, log: Path) -> object:
    return running(
        [
            sys.executable,
            "-m",
            "lgos_stack.postgres",
            f"--data={data}",
            f"--port={port}",
        ],
        log=log,
        name="the stack's PostgreSQL",
        stop_timeout=30,
    )


def _wait_for(url: str) -> None:
    wait_until(lambda: _connects(url) is True, STARTUP_SECONDS, "PostgreSQL")


def test_postgres_takes_only_the_password_generated_for_its_cluster(
    cluster: Path, tmp_path: Path
) -> None:
    data, port = cluster / "data", free_port()
    url = database_url("127.0.0.1", port, data)
    with _postgres(data, port, tmp_path / "postgres.log"):
        _wait_for(url)
        password = cluster_password(data)
        without = _connects(f"postgresql://postgres@127.0.0.1:{port}/postgres")
        wrong = _connects(f"postgresql://postgres:guess@127.0.0.1:{port}/postgres")
        right = _connects(f"postgresql://postgres:{password}@127.0.0.1:{port}/postgres")

    assert "no password" in str(without)
    assert "password authentication failed" in str(wrong)
    assert right is True
    # The URL the stack hands out names the password file, not the password.
    assert password not in url
    assert f"passfile={password_file(data)}" in url
    assert password_file(data).stat().st_mode & 0o777 == 0o600


def test_a_cluster_an_earlier_stack_left_with_trust_gets_a_password_and_keeps_its_data(
    cluster: Path, tmp_path: Path
) -> None:
    data, port = cluster / "data", free_port()
    url = database_url("127.0.0.1", port, data)
    log = tmp_path / "postgres.log"
    with _postgres(data, port, log):
        _wait_for(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE kept")
    # As an earlier stack left its cluster: trust, and no password file.
    (data / "pg_hba.conf").write_text("host all all all trust\n")
    password_file(data).unlink()

    with _postgres(data, port, log):
        _wait_for(url)
        without = _connects(f"postgresql://postgres@127.0.0.1:{port}/kept")
        kept = _connects(database_url("127.0.0.1", port, data, "kept"))

    assert "no password" in str(without)
    assert kept is True


def test_each_stack_has_s3_credentials_of_its_own(tmp_path: Path) -> None:
    first, again, other = (
        s3_credentials(tmp_path / "one"),
        s3_credentials(tmp_path / "one"),
        s3_credentials(tmp_path / "two"),
    )
    seaweed, files_api = file_services(
        tmp_path / "one", 1, 2, "weed", {"sk-demo": "default"}
    )

    assert first == again  # kept for the state folder
    assert first != other
    assert first != FORMER_S3_KEYS
    assert (
        seaweed.env["AWS_ACCESS_KEY_ID"],
        seaweed.env["AWS_SECRET_ACCESS_KEY"],
    ) == first
    assert (
        files_api.env["LGOS_FILES_S3_ACCESS_KEY"],
        files_api.env["LGOS_FILES_S3_SECRET_KEY"],
    ) == first
    modes = {p.stat().st_mode & 0o777 for p in (tmp_path / "one").rglob("*-key")}
    assert modes == {0o600}


async def _s3_answers(endpoint: str, key: str, secret: str) -> str:
    from aiobotocore.session import get_session
    from botocore.exceptions import ClientError

    async with get_session().create_client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        region_name="us-east-1",
    ) as s3:
        try:
            await s3.list_buckets()
        except ClientError as refused:
            return str(refused)
    return "ok"


def _serves(url: str) -> bool:
    """Any S3 answer, even a refusal: SeaweedFS is up."""
    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.TransportError:
        return False


def test_seaweedfs_and_the_files_api_run_on_the_generated_keys_only(
    tmp_path: Path,
) -> None:
    s3_port, files_port = free_ports(2)
    weed = str(Path(sys.executable).parent / "weed")
    seaweed, files_api = file_services(
        tmp_path, s3_port, files_port, weed, {"sk-demo": "default"}
    )
    s3 = start_process(
        seaweed.argv,
        log=tmp_path / "seaweedfs.log",
        name="SeaweedFS",
        env={**os.environ, **seaweed.env},
    )
    try:
        wait_until(lambda: _serves(seaweed.health_url), STARTUP_SECONDS, "SeaweedFS")
        with running(
            files_api.argv,
            log=tmp_path / "files-api.log",
            name="Files API",
            env={**os.environ, **files_api.env},
            health_url=files_api.health_url,  # healthy: it reached its bucket
        ):
            generated = asyncio.run(_s3_answers(seaweed.url, *s3_credentials(tmp_path)))
            former = asyncio.run(_s3_answers(seaweed.url, *FORMER_S3_KEYS))
    finally:
        s3.stop()

    assert generated == "ok"
    assert "InvalidAccessKeyId" in former
