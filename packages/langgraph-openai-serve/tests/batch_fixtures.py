"""A pytest plugin for the Batch API tests: one real Files API per session.

SeaweedFS and the Files API (``python -m lgos_files_api``) start once, with
an owner key per tenant and the service key LGOS's batches use
(``LGOS_BATCH_FILES_API_KEY``). ``batch_env`` holds the LGOS settings that
point a server at it; ``tenants`` builds an in-process LGOS app for a
registry and hands out SDK clients of both APIs for ``alice`` and ``bob``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from langgraph_openai_serve import (
    GraphConfig,
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from langgraph_openai_serve.batches.input import Limits
from lgos_testkit import FilesApi, files_api_on_seaweedfs, free_port
from openai import AsyncOpenAI

SERVICE_KEY = "sk-lgos-batches-service"
FILES_KEYS = {
    "sk-alice-files": "alice",
    "sk-bob-files": "bob",
    "sk-default-files": "default",  # the scope of a server without API keys
}
LGOS_KEYS = {"sk-alice": "alice", "sk-bob": "bob"}


@pytest.fixture(scope="session")
def files_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FilesApi]:
    root = tmp_path_factory.mktemp("batch-files")
    with files_api_on_seaweedfs(
        root,
        bucket="lgos-batch-tests",
        keys=FILES_KEYS,
        settings={"SERVICE_KEYS": json.dumps([SERVICE_KEY])},
    ) as api:
        yield api


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on."""
    return free_port()


@pytest.fixture(scope="session")
def batch_env(files_api: FilesApi) -> dict[str, str]:
    """``LGOS_*`` settings of a server whose batches use the session's Files
    API, with the tenants' keys."""
    return {
        "LGOS_BATCH_FILES_URL": files_api.openai_url,
        "LGOS_BATCH_FILES_API_KEY": SERVICE_KEY,
        "LGOS_API_KEYS": json.dumps(LGOS_KEYS),
    }


def files_client(files_api: FilesApi, owner: str) -> AsyncOpenAI:
    """An SDK client of the Files API acting as ``owner``."""
    key = next(k for k, v in FILES_KEYS.items() if v == owner)
    return AsyncOpenAI(base_url=files_api.openai_url, api_key=key, max_retries=0)


@dataclass
class Tenant:
    name: str
    lgos: AsyncOpenAI
    files: AsyncOpenAI

    async def upload(self, lines: list[Any], purpose: str = "batch") -> str:
        """A JSONL input file of ``lines`` (dicts are dumped, text kept)."""
        text = "".join(
            (line if isinstance(line, str) else json.dumps(line)) + "\n"
            for line in lines
        )
        created = await self.files.files.create(
            file=("input.jsonl", text.encode()),
            purpose=purpose,  # type: ignore[arg-type]
        )
        return created.id

    async def lines_of(self, file_id: str | None) -> list[dict[str, Any]]:
        if file_id is None:
            return []
        content = await self.files.files.content(file_id)
        return [json.loads(line) for line in content.text.splitlines()]


TenantsFactory = Callable[..., dict[str, Tenant]]


@pytest.fixture
async def tenants(
    batch_env: dict[str, str], files_api: FilesApi
) -> AsyncIterator[TenantsFactory]:
    """Build an in-process LGOS app for ``graphs`` (settings as keyword
    arguments on top of ``batch_env``; ``limits`` replaces the batch input
    limits) and the tenants' clients of it and of the Files API."""
    opened: list[AsyncOpenAI | httpx.AsyncClient] = []
    servers: list[LanggraphOpenaiServe] = []

    def make(
        graphs: dict[str, GraphConfig],
        *,
        limits: Limits | None = None,
        **settings: Any,
    ) -> dict[str, Tenant]:
        values = {key.removeprefix("LGOS_"): value for key, value in batch_env.items()}
        if limits is not None:  # lowered, so a test reaches them cheaply
            values.update(
                BATCH_MAX_LINES=limits.lines, BATCH_MAX_INPUT_BYTES=limits.bytes
            )
        server = LanggraphOpenaiServe(
            graphs=GraphRegistry(registry=graphs),
            settings=Settings(**{**values, **settings}),
        ).bind_openai_api()
        servers.append(server)
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=server.app), base_url="http://lgos.test"
        )
        opened.append(http)
        result = {}
        for lgos_key, name in LGOS_KEYS.items():
            lgos = AsyncOpenAI(
                base_url="http://lgos.test/v1",
                api_key=lgos_key,
                http_client=http,
                max_retries=0,
            )
            files = files_client(files_api, name)
            opened.extend([lgos, files])
            result[name] = Tenant(name, lgos, files)
        return result

    yield make
    for server in servers:
        await server.close()
    for client in opened:
        if isinstance(client, httpx.AsyncClient):
            await client.aclose()
        else:
            await client.close()
