"""The Batch API tutorial: a dataset evaluated through a real Files API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import batch_client
import pytest
from conftest import expected_output
from lgos_testkit import FilesApi, files_api_on_seaweedfs

SERVICE_KEY = "sk-lgos-batches"
OWNER_KEY = "sk-files-you"


@pytest.fixture(scope="module")
def files_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FilesApi]:
    with files_api_on_seaweedfs(
        tmp_path_factory.mktemp("files"),
        bucket="lgos-docs-batches",
        # Without LGOS API keys every caller is the tenant "default".
        keys={OWNER_KEY: "default"},
        settings={"SERVICE_KEYS": json.dumps([SERVICE_KEY])},
    ) as api:
        yield api


def test_a_dataset_is_evaluated_with_the_batch_api(
    serve, files_api: FilesApi, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("LGOS_BATCH_FILES_URL", files_api.openai_url)
    monkeypatch.setenv("LGOS_BATCH_FILES_API_KEY", SERVICE_KEY)
    server = serve("batch_app")

    batch_client.main(server.base_url, files_api.openai_url, OWNER_KEY)

    assert capsys.readouterr().out == expected_output("batch_client.out")


def test_the_page_runs_the_samples_it_shows() -> None:
    page = (Path(__file__).parents[1] / "tutorials" / "batch-evaluation.md").read_text()

    for sample in ("batch_app.py", "batch_client.py", "batch_client.out"):
        assert f'--8<-- "{sample}"' in page
