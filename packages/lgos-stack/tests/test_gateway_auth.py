"""A wrong key at the gateway is a 401 that says which key to send.

The real LiteLLM proxy (``.tools/litellm``), once on the configuration the
native stack writes (``gateway_services``) and once on compose's (the gateway
file that includes the synced model list, with the auth module beside it),
each reached with the official SDK. No model backend is needed: a refused
key never gets that far, and the master key is proved by the model list.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest
import yaml
from gateway_configs import MASTER_KEY, compose_config, native_config
from lgos_stack.gateway import AUTH_MODULE
from lgos_testkit.litellm import LiteLLM, litellm
from prometheus_client.parser import text_string_to_metric_families

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module", params=["native", "compose"])
def gateway(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiteLLM]:
    folder = tmp_path_factory.mktemp(request.param)
    write = native_config if request.param == "native" else compose_config
    config, env = write(folder)
    with litellm(config, MASTER_KEY, extra_env=env) as proxy:
        yield proxy


def sdk(gateway: LiteLLM, key: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=gateway.openai_url, api_key=key, max_retries=0, timeout=60
    )


@pytest.mark.parametrize("key", ["sk-not-the-master-key", "wrong-shape"])
def test_a_wrong_gateway_key_is_a_401_that_says_which_key_to_send(gateway, key):
    with sdk(gateway, key) as client:
        with pytest.raises(openai.AuthenticationError) as chat:
            client.chat.completions.create(
                model="lgos/simple", messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.AuthenticationError) as responses:
            client.responses.create(model="lgos/simple", input="hi")

    for refused in (chat.value, responses.value):
        assert refused.status_code == 401
        assert "Invalid API key for the LGOS gateway (LiteLLM)" in refused.message
        assert "LITELLM_MASTER_KEY" in refused.message
        assert "No connected db" not in refused.message
        assert key not in refused.message


def test_no_key_at_all_is_a_401_that_says_how_to_send_one(gateway):
    answer = httpx.post(
        f"{gateway.openai_url}/chat/completions",
        json={"model": "lgos/simple", "messages": []},
        timeout=60,
    )

    assert answer.status_code == 401
    assert (
        "Authorization: Bearer <LITELLM_MASTER_KEY>"
        in (answer.json()["error"]["message"])
    )


def test_the_master_key_still_opens_the_gateway(gateway):
    with sdk(gateway, MASTER_KEY) as client:
        models = {model.id for model in client.models.list()}

    assert models == {"lgos/simple"}


def test_the_stack_copies_the_current_auth_module_beside_the_config(tmp_path):
    config, _ = native_config(tmp_path)
    (config.parent / AUTH_MODULE.name).write_text("# an older copy\n")

    config, _ = native_config(tmp_path)

    assert (config.parent / AUTH_MODULE.name).read_text() == AUTH_MODULE.read_text()
    settings = yaml.safe_load(config.read_text())["general_settings"]
    assert settings["master_key"] == "os.environ/LITELLM_MASTER_KEY"
    assert settings["custom_auth"] == "lgos_gateway_auth.user_api_key_auth"


def _failed_requests(gateway: LiteLLM) -> float:
    answer = httpx.get(
        f"{gateway.url}/metrics/",
        headers={"Authorization": f"Bearer {MASTER_KEY}"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(answer.text)
        if family.name == "litellm_proxy_failed_requests_metric"
        for sample in family.samples
        if sample.name.endswith("_total")
    )


def test_the_gateway_counts_a_refused_request_in_its_own_metrics(gateway):
    # Prometheus scrapes LiteLLM's /metrics/ with the master key (the stacks
    # give it the key); without one the metrics stay closed.
    assert httpx.get(f"{gateway.url}/metrics/", timeout=60).status_code == 401
    before = _failed_requests(gateway)
    with (
        sdk(gateway, "sk-not-the-master-key") as client,
        pytest.raises(openai.AuthenticationError),
    ):
        client.models.list()

    assert _failed_requests(gateway) == before + 1
