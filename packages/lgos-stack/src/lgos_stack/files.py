"""The stack's file storage: SeaweedFS (S3) and the Files API on top of it.

SeaweedFS's internal ports are picked free at each start; its data lives in
the state folder, so uploaded files survive restarts.

The Files API's owners are the demo API's tenants, so the Batch API works
out of the box: a batch reads its input as, and writes its results for, the
tenant that created it. Without ``LGOS_API_KEYS`` every caller of the demo
API is the tenant ``default``, the owner of the demo's files key; with keys,
each key opens the Files API too, as its principal (one key, both APIs, as
at OpenAI). LGOS (batches, the demo graphs) reaches the files with a service
key generated once into the state folder, acting for each request's tenant.
The UIs upload with a gateway key (also generated) that acts for the end
user they name: the owner ``gateway.<user>``, that user's tenant in LGOS.
The Files API reaches SeaweedFS with S3 credentials generated there too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

from langgraph_openai_serve import ApiKeys

from lgos_stack.gateway import GATEWAY_PRINCIPAL, ConfigError, generated_secret
from lgos_stack.net import LOOPBACK, free_ports
from lgos_stack.supervisor import Service

FILES_OWNER = "default"
"""The demo API's tenant without API keys (LGOS's shared scope)."""
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


def weed_mini_argv(weed: str, root: Path, s3_port: int) -> list[str]:
    """``weed mini`` with S3 on ``s3_port`` and its data, logs and sockets in
    ``root`` (which holds ``data``, ``log`` and ``tmp``); every internal port
    is picked free. The test kit starts SeaweedFS with the same command."""
    internal = dict(
        zip(_WEED_INTERNAL_PORTS, free_ports(len(_WEED_INTERNAL_PORTS)), strict=True)
    )
    return [
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
        f"-s3.port={s3_port}",
        f"-s3.localSocket={root / 's3.sock'}",
        f"-filer.localSocket={root / 'filer.sock'}",
        "-idleTimeout=3",
        *(f"-{flag}={port}" for flag, port in internal.items()),
    ]


def s3_credentials(state_dir: Path) -> tuple[str, str]:
    """The S3 access key and secret SeaweedFS and the Files API share, made
    once for the state folder (owner-only files beside SeaweedFS's data):
    no two stacks share them, and nothing else on the machine that knows the
    S3 port knows them. SeaweedFS takes them at each start, so a state
    folder from before keeps its files."""
    folder = state_dir / "seaweedfs"
    return (
        generated_secret(folder / "access-key", prefix="lgos-"),
        generated_secret(folder / "secret-key"),
    )


def service_key(state_dir: Path) -> str:
    """The Files API service key the demo API and the worker use for
    batches (``LGOS_BATCH_FILES_API_KEY``), made once for the state folder."""
    return generated_secret(
        state_dir / "files" / "service-key", prefix="sk-lgos-files-service-"
    )


def ui_files_key(state_dir: Path) -> str:
    """The Files API gateway key the UIs upload and download with, acting
    for the end user they name (``LGOS_FILES_GATEWAY_KEYS``), made once."""
    return generated_secret(state_dir / "files" / "ui-key", prefix="sk-lgos-files-ui-")


def file_owners(api_key: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The Files API's keys and their owners: the demo's key for the tenant
    ``default`` and, when the demo API has ``LGOS_API_KEYS``, each of those
    keys for its principal.

    Raises:
        ConfigError: ``LGOS_API_KEYS`` is not a valid key list or mapping.
    """
    configured = environ.get("LGOS_API_KEYS")
    try:
        tenants = ApiKeys.principals(configured) if configured else {}
    except ValueError as exc:
        raise ConfigError(f"LGOS_API_KEYS: {exc}") from None
    return {**tenants, api_key: FILES_OWNER}


def file_services(
    state_dir: Path,
    s3_port: int,
    files_port: int,
    weed: str,
    owners: Mapping[str, str],
) -> list[Service]:
    """SeaweedFS's S3 and the Files API on it (after SeaweedFS is healthy),
    with ``owners`` as its keys and the stack's service key."""
    root = state_dir / "seaweedfs"
    for name in ("data", "log", "tmp"):
        (root / name).mkdir(parents=True, exist_ok=True)
    access_key, secret_key = s3_credentials(state_dir)
    s3 = f"http://{LOOPBACK}:{s3_port}"
    seaweed = Service(
        name="SeaweedFS",
        argv=weed_mini_argv(weed, root, s3_port),
        port=s3_port,
        url=s3,
        health_url=s3,
        # Any S3 answer (even "access denied") means it serves.
        healthy=lambda response: response.status_code < 500,
        env={
            "AWS_ACCESS_KEY_ID": access_key,
            "AWS_SECRET_ACCESS_KEY": secret_key,
            # Its gRPC sockets go to the temp folder: keep them in ours.
            "TMPDIR": str(root / "tmp"),
        },
    )
    files = f"http://{LOOPBACK}:{files_port}"
    files_api = Service(
        name="Files API",
        argv=[
            sys.executable,
            "-m",
            "lgos_files_api",
            f"--host={LOOPBACK}",
            f"--port={files_port}",
            "--log-level=warning",
        ],
        port=files_port,
        url=f"{files}/v1",
        health_url=f"{files}/health",
        after=("SeaweedFS",),
        env={
            "LGOS_FILES_S3_ENDPOINT": s3,
            "LGOS_FILES_S3_BUCKET": "lgos-demo-files",
            "LGOS_FILES_S3_ACCESS_KEY": access_key,
            "LGOS_FILES_S3_SECRET_KEY": secret_key,
            "LGOS_FILES_API_KEYS": json.dumps(dict(owners)),
            "LGOS_FILES_SERVICE_KEYS": json.dumps([service_key(state_dir)]),
            "LGOS_FILES_GATEWAY_KEYS": json.dumps(
                {ui_files_key(state_dir): GATEWAY_PRINCIPAL}
            ),
        },
    )
    return [seaweed, files_api]
