"""One identity from the UI to LGOS, through the real LiteLLM proxy.

LiteLLM runs on the native stack's and on compose's configuration in front of
a real LGOS server (the core library, in-process) that knows LiteLLM's key as
the gateway key of ``gateway``. The UIs' key names each request's user in
``x-lgos-end-user``; LiteLLM forwards it, and LGOS runs the request as the
tenant ``gateway.<user>``: Alice's background Response is a 404 to Bob, on
the follow route and on LiteLLM's own ``/v1``. The UI key runs graphs and
administers nothing; only it and the master key may name a user.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from fastapi import FastAPI
from gateway_configs import MASTER_KEY, compose_config, native_config
from langgraph_openai_serve import (
    GraphRegistry,
    LanggraphOpenaiServe,
    Settings,
)
from lgos_chainlit.gateway_ids import upstream_response_id
from lgos_stack.gateway import (
    _END_USER_SETTINGS,
    _FORWARD_HEADERS,
    _SEED_CONFIG,
    FOLLOW_BASE_PATH,
    LGOS_KEY_ENV,
    UI_KEYS_ENV,
    add_end_user_forwarding,
    lgos_gateway_key,
    litellm_config,
    ui_key,
)
from lgos_testkit import ThreadServer, lgos_routes, wait_until
from lgos_testkit.graphs import whoami_config
from lgos_testkit.litellm import LiteLLM, litellm

pytestmark = pytest.mark.timeout(600)

END_USER = "x-lgos-end-user"
COMPOSE_LGOS_KEY = "sk-compose-test-lgos-gateway"
COMPOSE_UI_KEY = "sk-compose-test-ui"


def _lgos_app(gateway_key: str) -> FastAPI:
    graphs = GraphRegistry(registry={"whoami": whoami_config()})
    app = FastAPI()
    settings = Settings(GATEWAY_KEYS=json.dumps({gateway_key: "gateway"}))
    LanggraphOpenaiServe(graphs=graphs, app=app, settings=settings).bind_openai_api()
    return app


@dataclass(frozen=True)
class Gateway:
    proxy: LiteLLM
    ui_key: str

    def client(self, end_user: str | None, *, follow: bool = False) -> openai.OpenAI:
        base = self.proxy.url + FOLLOW_BASE_PATH if follow else self.proxy.openai_url
        return openai.OpenAI(
            base_url=base,
            api_key=self.ui_key,
            max_retries=0,
            timeout=60,
            default_headers={END_USER: end_user} if end_user else None,
        )


def _keyed_routes(lgos_url: str) -> list[dict[str, Any]]:
    routes = lgos_routes(lgos_url, ["whoami"])
    for route in routes:
        route["litellm_params"]["api_key"] = f"os.environ/{LGOS_KEY_ENV}"
    return routes


@pytest.fixture(scope="module", params=["native", "compose"])
def gateway(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gateway]:
    folder = tmp_path_factory.mktemp(request.param)
    native = request.param == "native"
    # Natively the stack generates both keys into its state folder.
    lgos_key = lgos_gateway_key(folder) if native else COMPOSE_LGOS_KEY
    ui = ui_key(folder) if native else COMPOSE_UI_KEY
    with ThreadServer(_lgos_app(lgos_key)) as server:
        lgos_url = f"{server.url}/v1"
        write = native_config if native else compose_config
        config, env = write(folder, lgos_url, _keyed_routes(lgos_url))
        env = env | {LGOS_KEY_ENV: lgos_key, UI_KEYS_ENV: ui}
        with litellm(config, MASTER_KEY, extra_env=env) as proxy:
            yield Gateway(proxy, ui)


def _finished(client: openai.OpenAI, response_id: str) -> Any:
    wait_until(
        lambda: client.responses.retrieve(response_id).status == "completed",
        60,
        f"background response {response_id} to complete",
    )
    return client.responses.retrieve(response_id)


def test_two_users_through_the_gateway_are_two_lgos_tenants(gateway: Gateway) -> None:
    alice, bob = gateway.client("alice"), gateway.client("bob")
    alice_follow = gateway.client("alice", follow=True)
    bob_follow = gateway.client("bob", follow=True)

    queued = alice.responses.create(model="lgos/whoami", input="who?", background=True)
    lgos_id = upstream_response_id(queued.id)
    finished = _finished(alice_follow, lgos_id)
    refused = {}
    attempts = {
        "follow route": lambda: bob_follow.responses.retrieve(lgos_id),
        "follow route cancel": lambda: bob_follow.responses.cancel(lgos_id),
        "gateway /v1": lambda: bob.responses.retrieve(queued.id),
    }
    for name, attempt in attempts.items():
        with pytest.raises(openai.NotFoundError) as missing:
            attempt()
        refused[name] = missing.value.status_code
    foreground = bob.responses.create(model="lgos/whoami", input="who?")
    chat = bob.chat.completions.create(
        model="lgos/whoami", messages=[{"role": "user", "content": "who?"}]
    )

    assert finished.output_text == "scope=gateway.alice"
    assert refused == dict.fromkeys(attempts, 404)
    assert foreground.output_text == "scope=gateway.bob"
    assert chat.choices[0].message.content == "scope=gateway.bob"


def test_without_a_user_the_gateway_runs_as_itself(gateway: Gateway) -> None:
    answer = gateway.client(None).responses.create(model="lgos/whoami", input="?")

    assert answer.output_text == "scope=gateway"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/key/generate"),
        ("POST", "/model/new"),
        ("GET", "/key/list"),
        ("POST", "/config/update"),
        ("GET", "/global/spend/logs"),
    ],
)
def test_the_ui_key_administers_nothing(gateway: Gateway, method: str, path: str):
    headers = {"Authorization": f"Bearer {gateway.ui_key}"}

    answer = httpx.request(
        method, gateway.proxy.url + path, headers=headers, json={}, timeout=30
    )
    models = httpx.get(gateway.proxy.url + "/model/info", headers=headers, timeout=30)

    assert answer.status_code == 403, answer.text
    assert "UI key" in answer.text
    assert models.status_code == 200
    assert [m["model_name"] for m in models.json()["data"]] == ["lgos/whoami"]


@pytest.mark.parametrize("header", [END_USER, f"x-pass-{END_USER}"])
def test_only_the_ui_and_master_keys_may_name_a_user(gateway: Gateway, header: str):
    answers = {
        key: httpx.post(
            f"{gateway.proxy.url}/v1/responses",
            headers={"Authorization": f"Bearer {key}", header: "alice"},
            json={"model": "lgos/whoami", "input": "who?"},
            timeout=60,
        )
        for key in ("sk-some-other-key", gateway.ui_key, MASTER_KEY)
    }

    assert answers["sk-some-other-key"].status_code == 403
    assert "may name the end user" in answers["sk-some-other-key"].text
    assert answers[gateway.ui_key].status_code == 200
    assert answers[MASTER_KEY].status_code == 200


def test_a_config_seeded_before_end_users_is_given_their_forwarding(
    tmp_path: Path,
) -> None:
    config = litellm_config(tmp_path)
    config.parent.mkdir(parents=True)
    # What the stack seeded before: no forwarding of the client's headers.
    older = _SEED_CONFIG.replace(_END_USER_SETTINGS, "").replace(_FORWARD_HEADERS, "")
    config.write_text(older)

    assert add_end_user_forwarding(config)
    assert config.read_text() == _SEED_CONFIG
    assert not add_end_user_forwarding(config)
    settings = yaml.safe_load(config.read_text())["general_settings"]
    assert settings["forward_client_headers_to_llm_api"] is True
    assert settings["pass_through_endpoints"][0]["forward_headers"] is True
