"""A trusted gateway key acts for the end users it names (``x-lgos-end-user``).

One gateway key (``LGOS_GATEWAY_KEYS``) serving two users makes two tenants,
``<gateway>.<user>`` each: one's background Response is a 404 to the other, to
the gateway's own scope and to a client whose own principal has the user's
name. The graph runs for that tenant (``GraphRequest.scope``). Only a gateway
key may name an end user: a client's key, no key or a wrong one is refused
with 403 before anything runs, and a malformed name is a 400 naming the
header. Keys that could be mistaken for each other stop the server at start.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pydantic
import pytest
from conftest import LgosServe, start_lgos_serve
from langgraph_openai_serve import LanggraphOpenaiServe, Settings
from lgos_testkit import wait_until
from tenancy_app import registry

API_KEYS = json.dumps({"sk-alice": "alice"})
GATEWAY_KEYS = json.dumps({"sk-gateway": "webui"})
END_USER = "x-lgos-end-user"


def _client(base_url: str, key: str, end_user: str | None = None) -> openai.OpenAI:
    headers = {END_USER: end_user} if end_user is not None else None
    return openai.OpenAI(
        base_url=base_url, api_key=key, max_retries=0, default_headers=headers
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LgosServe]:
    server = start_lgos_serve(
        tmp_path_factory.mktemp("gateway"),
        "tenancy_app:registry",
        LGOS_API_KEYS=API_KEYS,
        LGOS_GATEWAY_KEYS=GATEWAY_KEYS,
    )
    yield server
    server.process.stop()


def _settled(client: openai.OpenAI, response_id: str) -> Any:
    wait_until(
        lambda: (
            client.responses.retrieve(response_id).status
            not in ("queued", "in_progress")
        ),
        20,
        f"background response {response_id} to finish",
    )
    return client.responses.retrieve(response_id)


def test_two_end_users_of_one_gateway_key_are_two_tenants(served: LgosServe) -> None:
    alice = _client(served.base_url, "sk-gateway", "alice")
    others = {
        "bob behind the same gateway": _client(served.base_url, "sk-gateway", "bob"),
        "the gateway itself": _client(served.base_url, "sk-gateway"),
        "the client key of principal alice": _client(served.base_url, "sk-alice"),
    }

    queued = alice.responses.create(
        model="notes",
        input="milk",
        background=True,
        extra_headers={"Idempotency-Key": "groceries"},
    )
    finished = _settled(alice, queued.id)
    found = {}
    for name, other in others.items():
        try:
            other.responses.retrieve(queued.id)
            found[name] = "found"
        except openai.NotFoundError as exc:
            found[name] = exc.body["code"]
    bob = others["bob behind the same gateway"]
    bobs = bob.responses.create(
        model="notes",
        input="bread",
        background=True,
        extra_headers={"Idempotency-Key": "groceries"},
    )

    assert finished.output_text == "Noted: milk"
    assert found == dict.fromkeys(others, "response_not_found")
    assert bobs.id != queued.id
    assert _settled(bob, bobs.id).output_text == "Noted: bread"
    asked = alice.responses.create(model="whoami", input="who?")
    assert asked.output_text == "scope=webui.alice"


def _app(**settings: str) -> Any:
    return (
        LanggraphOpenaiServe(graphs=registry(), settings=Settings(**settings))
        .bind_openai_api()
        .app
    )


def _async_client(
    app: Any, key: str | None, headers: list[tuple[str, str]] | None = None
) -> openai.AsyncOpenAI:
    # A list keeps repeated headers (a mapping would merge them).
    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://t",
        headers=headers or [],
    )
    return openai.AsyncOpenAI(
        base_url="http://t/v1", api_key=key or "", http_client=http, max_retries=0
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("settings", "key", "end_user", "scope"),
    [
        (
            {"API_KEYS": API_KEYS, "GATEWAY_KEYS": GATEWAY_KEYS},
            "sk-gateway",
            "bob",
            "webui.bob",
        ),
        (
            {"API_KEYS": API_KEYS, "GATEWAY_KEYS": GATEWAY_KEYS},
            "sk-gateway",
            None,
            "webui",
        ),
        (
            {"API_KEYS": API_KEYS, "GATEWAY_KEYS": GATEWAY_KEYS},
            "sk-alice",
            None,
            "alice",
        ),
        ({"GATEWAY_KEYS": GATEWAY_KEYS}, "sk-gateway", "bob", "webui.bob"),
        ({"GATEWAY_KEYS": GATEWAY_KEYS}, "unused", None, "default"),
    ],
)
async def test_the_graph_runs_for_the_tenant_of_the_key_and_end_user(
    settings: dict[str, str], key: str, end_user: str | None, scope: str
) -> None:
    headers = [(END_USER, end_user)] if end_user else None
    client = _async_client(_app(**settings), key, headers)

    chat = await client.chat.completions.create(
        model="whoami", messages=[{"role": "user", "content": "who?"}]
    )
    response = await client.responses.create(model="whoami", input="who?")

    assert chat.choices[0].message.content == f"scope={scope}"
    assert response.output_text == f"scope={scope}"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"API_KEYS": API_KEYS, "GATEWAY_KEYS": GATEWAY_KEYS}, "sk-alice"),
        ({"GATEWAY_KEYS": GATEWAY_KEYS}, None),
        ({"GATEWAY_KEYS": GATEWAY_KEYS}, "sk-wrong"),
        ({"API_KEYS": API_KEYS}, "sk-alice"),
        ({}, None),
    ],
    ids=[
        "a client key",
        "no key",
        "a wrong key",
        "a server without gateway keys",
        "a server without keys",
    ],
)
async def test_only_a_gateway_key_may_name_an_end_user(
    settings: dict[str, str], key: str | None
) -> None:
    # Plain HTTP: an SDK always sends some key.
    headers = {END_USER: "bob"} | ({"Authorization": f"Bearer {key}"} if key else {})
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app(**settings)),
        base_url="http://t/v1",
        headers=headers,
    ) as http:
        run = await http.post("/responses", json={"model": "whoami", "input": "?"})
        listed = await http.get("/models")

    assert (run.status_code, listed.status_code) == (403, 403)
    assert run.json()["error"]["code"] == "end_user_not_allowed"
    assert run.json()["error"]["param"] == END_USER


@pytest.mark.anyio
@pytest.mark.parametrize(
    "end_users",
    [["../../health"], [""], ["a" * 65], ["bob@example.com"], ["bob", "carol"]],
    ids=["a path", "empty", "too long", "an email", "two headers"],
)
async def test_a_malformed_end_user_is_a_400_naming_the_header(
    end_users: list[str],
) -> None:
    app = _app(API_KEYS=API_KEYS, GATEWAY_KEYS=GATEWAY_KEYS)
    client = _async_client(app, "sk-gateway", [(END_USER, name) for name in end_users])

    with pytest.raises(openai.BadRequestError) as refused:
        await client.responses.create(model="whoami", input="who?")

    assert refused.value.body["code"] == "invalid_end_user"
    assert refused.value.body["param"] == END_USER


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {
                "API_KEYS": json.dumps({"sk-same": "a"}),
                "GATEWAY_KEYS": '{"sk-same": "g"}',
            },
            "both in LGOS_API_KEYS and a gateway's",
        ),
        (
            {
                "API_KEYS": json.dumps({"sk-x": "webui.bob"}),
                "GATEWAY_KEYS": GATEWAY_KEYS,
            },
            "looks like an end user of the gateway 'webui'",
        ),
        ({"GATEWAY_KEYS": '{"sk-g": "web.ui"}'}, "must be 1-32 letters"),
        ({"GATEWAY_KEYS": "sk-g"}, "LGOS_GATEWAY_KEYS is not valid JSON"),
    ],
)
def test_gateway_keys_that_could_be_mistaken_stop_the_server_at_start(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(pydantic.ValidationError, match=message):
        Settings(**settings)
