"""The LiteLLM component as it would run: its model-sync init container
against ``lgos serve`` (started as the base runs it), then the pinned LiteLLM
proxy on the component's own files and environment, answering its probes
and listing every graph."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from deploy_support import Rendered, RunningApi, container, local_command, plain_env
from lgos_testkit import LiteLLM, litellm

MASTER_KEY = "sk-deploy-test-master"
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def _model_sync(production: Rendered, api: RunningApi, folder: Path) -> Path:
    """Run the init container's command with the API's Service address
    replaced by the local process; return the model list it wrote."""
    workload = production.get("Deployment", "lgos-litellm")
    argv, env = local_command(
        production, workload, "model-sync", folder, LGOS_API_KEY=api.client_key
    )
    argv = [word.replace("http://lgos-api:8000", api.url) for word in argv]
    argv = [word.replace("/etc/litellm/synced", str(folder)) for word in argv]
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return folder / "config.yaml"


@pytest.fixture(scope="module")
def proxy(
    production: Rendered, api: RunningApi, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiteLLM]:
    """The proxy on the component's ConfigMap files laid out as the pod
    mounts them (/etc/litellm), the synced list beside them, and the
    container's environment (writable paths moved into the scratch folder)."""
    etc = tmp_path_factory.mktemp("etc-litellm")
    gateway = production.named("ConfigMap", "lgos-litellm-gateway")["data"]
    for name, text in gateway.items():
        (etc / name).write_text(text, encoding="utf-8")
    (etc / "synced").mkdir()
    _model_sync(production, api, etc / "synced")
    workload = production.get("Deployment", "lgos-litellm")
    env = plain_env(production, container(workload, "litellm"))
    state = tmp_path_factory.mktemp("var-lib-litellm")
    env |= {
        "LGOS_API_KEY": api.client_key,
        "LGOS_GATEWAY_FOLLOW_TARGET": f"{api.url}/v1/responses",
        "LITELLM_UI_PATH": str(state / "ui"),
        "LITELLM_ASSETS_PATH": str(state / "assets"),
        "HOME": str(state),
    }
    with litellm(etc / "config.yaml", MASTER_KEY, extra_env=env) as running_proxy:
        yield running_proxy


def test_the_litellm_model_sync_lists_every_graph_with_the_api_key_it_is_given(
    production: Rendered, api: RunningApi, tmp_path: Path
) -> None:
    # The init container as the component writes it, the API's Service
    # address replaced by the local process: the key comes from the same
    # Secret key the API's LGOS_API_KEYS holds (lgos-api: client-key).
    litellm = production.get("Deployment", "lgos-litellm")
    config = yaml.safe_load(_model_sync(production, api, tmp_path).read_text())
    names = {entry["model_name"] for entry in config["model_list"]}
    assert {"lgos/simple", "lgos/interrupts"} <= names
    keys = {entry["litellm_params"]["api_key"] for entry in config["model_list"]}
    # What the LiteLLM container resolves from its own LGOS_API_KEY.
    assert keys == {"os.environ/LGOS_API_KEY"}
    container_env = {e["name"] for e in container(litellm, "litellm")["env"]}
    assert "LGOS_API_KEY" in container_env


def test_the_wait_for_the_api_passes_once_the_api_is_ready(
    production: Rendered, api: RunningApi, tmp_path: Path
) -> None:
    workload = production.get("Deployment", "lgos-litellm")
    argv, env = local_command(production, workload, "wait-for-api", tmp_path)
    argv = [word.replace("http://lgos-api:8000", api.url) for word in argv]

    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    assert result.returncode == 0, result.stdout + result.stderr


def test_litellm_answers_its_probes_and_lists_every_graph(
    production: Rendered, proxy: LiteLLM
) -> None:
    box = container(production.get("Deployment", "lgos-litellm"), "litellm")
    for kind in PROBES:
        path = box[kind]["httpGet"]["path"]
        assert httpx.get(proxy.url + path, timeout=10).status_code == 200, path
    listed = httpx.get(f"{proxy.openai_url}/models", headers=proxy.auth, timeout=30)

    assert listed.status_code == 200, listed.text
    assert {"lgos/simple", "lgos/interrupts"} <= {
        m["id"] for m in listed.json()["data"]
    }
