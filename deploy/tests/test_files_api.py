"""The Files API as the base runs it: its command and environment, the
try-out's generated secrets in the formats the service parses, on a real S3
(SeaweedFS), answering its probes and the clients the keys are for."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from deploy_support import Rendered, container, generated_secrets, local_command
from lgos_testkit import free_port, running, seaweedfs


@pytest.fixture(scope="module")
def files_api(
    base: Rendered, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str]]]:
    scratch = tmp_path_factory.mktemp("files-api")
    secrets = generated_secrets(scratch / "secrets")
    files, s3 = secrets["files.env"], secrets["files-s3.env"]
    (scratch / "s3").mkdir()
    with seaweedfs(scratch / "s3", s3["access-key"], s3["secret-key"]) as endpoint:
        port = free_port()
        argv, env = local_command(
            base,
            base.get("Deployment", "lgos-files-api"),
            "files-api",
            scratch,
            LGOS_FILES_S3_ENDPOINT=endpoint.url,
            LGOS_FILES_S3_BUCKET=s3["bucket"],
            LGOS_FILES_S3_ACCESS_KEY=s3["access-key"],
            LGOS_FILES_S3_SECRET_KEY=s3["secret-key"],
            LGOS_FILES_API_KEYS=files["api-keys"],
            LGOS_FILES_SERVICE_KEYS=files["service-keys"],
        )
        argv = [{"0.0.0.0": "127.0.0.1", "8100": str(port)}.get(w, w) for w in argv]
        url = f"http://127.0.0.1:{port}"
        with running(
            argv,
            log=scratch / "files-api.log",
            name="lgos-files-api",
            env=env,
            health_url=f"{url}/health",
        ):
            yield url, files


def test_the_readiness_route_answers_once_the_bucket_exists(
    base: Rendered, files_api: tuple[str, dict[str, str]]
) -> None:
    url, _keys = files_api
    box = container(base.get("Deployment", "lgos-files-api"), "files-api")
    path = box["readinessProbe"]["httpGet"]["path"]

    assert httpx.get(url + path, timeout=30).status_code == 200


def test_the_generated_keys_are_the_ones_the_service_accepts(
    files_api: tuple[str, dict[str, str]],
) -> None:
    url, keys = files_api
    client = {"Authorization": f"Bearer {keys['client-key']}"}
    uploaded = httpx.post(
        f"{url}/v1/files",
        headers=client,
        files={"file": ("note.txt", b"hello")},
        data={"purpose": "user_data"},
        timeout=30,
    )
    assert uploaded.status_code == 200, uploaded.text
    # The Batch API's service key acts for the owner the request names: the
    # owner the generated client key maps to.
    owner = json.loads(keys["api-keys"])[keys["client-key"]]
    service = {
        "Authorization": f"Bearer {keys['service-key']}",
        "X-Lgos-Owner": owner,
    }
    listed = httpx.get(f"{url}/v1/files", headers=service, timeout=30)
    assert listed.status_code == 200, listed.text
    assert uploaded.json()["id"] in {item["id"] for item in listed.json()["data"]}
    wrong = httpx.get(
        f"{url}/v1/files", headers={"Authorization": "Bearer sk-wrong"}, timeout=30
    )
    assert wrong.status_code == 401
