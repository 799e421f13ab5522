"""``file-display`` reads and writes files as the caller, never as one owner.

The demo API (the demos' registry on the core library, in this process) has
two tenants, Alice and Bob, whose keys open the real Files API on SeaweedFS
too, each as its own owner; the graphs hold the Files API's service key and
act for the tenant of each request. Bob naming Alice's file gets the Files
API's 404, and the chart Alice asked for is hers alone. A ``file_id`` that is
not an id (``../../health``) is refused before it touches a URL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import openai
import pytest
from fastapi import FastAPI
from langgraph_openai_serve import LanggraphOpenaiServe, Settings
from lgos_demos.registry import build_demo_registry
from lgos_demos.settings import DemoSettings
from lgos_testkit import ThreadServer, files_api_on_seaweedfs

KEYS = {"sk-alice-files-test": "alice", "sk-bob-files-test": "bob"}
SERVICE_KEY = "sk-graphs-files-test"
CSV = b"month,visitors\nJan,120\nFeb,340\n"


@dataclass(frozen=True)
class Tenant:
    api: openai.OpenAI
    files: openai.OpenAI


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Tenant]]:
    settings = {"SERVICE_KEYS": json.dumps([SERVICE_KEY])}
    with files_api_on_seaweedfs(
        tmp_path_factory.mktemp("seaweed"),
        bucket="lgos-demo-caller-files",
        keys=KEYS,
        settings=settings,
    ) as files_api:
        demo = DemoSettings(FILES_URL=files_api.openai_url, FILES_API_KEY=SERVICE_KEY)
        app = FastAPI()
        LanggraphOpenaiServe(
            graphs=build_demo_registry(demo).registry,
            app=app,
            settings=Settings(API_KEYS=json.dumps(KEYS)),
        ).bind_openai_api()
        with ThreadServer(app) as server:
            clients = {
                owner: Tenant(
                    api=openai.OpenAI(
                        base_url=f"{server.url}/v1", api_key=key, max_retries=0
                    ),
                    files=openai.OpenAI(
                        base_url=files_api.openai_url, api_key=key, max_retries=0
                    ),
                )
                for key, owner in KEYS.items()
            }
            yield clients


def _chart(tenant: Tenant, file_id: str) -> str:
    response = tenant.api.responses.create(
        model="file-display",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Chart the visitors"},
                    {"type": "input_file", "file_id": file_id},
                ],
            }
        ],
    )
    return response.output[-1].content[0].text


def test_a_graph_reads_and_writes_only_the_callers_files(tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    uploaded = alice.files.files.create(
        file=("sales.csv", CSV, "text/csv"), purpose="user_data"
    )

    bobs_answer = _chart(bob, uploaded.id)
    alices_answer = _chart(alice, uploaded.id)
    chart_id = alices_answer.split("uploaded it as ")[1].split(" ")[0]

    assert bobs_answer.startswith("I could not chart that file")
    assert "404" in bobs_answer
    assert "uploaded it as file-" in alices_answer
    assert alice.files.files.retrieve(chart_id).filename == "sales-chart.svg"
    with pytest.raises(openai.NotFoundError):
        bob.files.files.retrieve(chart_id)


@pytest.mark.parametrize("file_id", ["../../health", "file-../../health", "file-a?b"])
def test_a_file_id_that_is_not_an_id_never_reaches_a_url(tenants, file_id):
    answer = _chart(tenants["alice"], file_id)

    assert answer.startswith("I could not chart that file")
    assert "is not a file id" in answer
    assert "Files API" not in answer
