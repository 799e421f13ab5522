"""A gateway key (a UI in front of LGOS) acts for the end users it names in
``x-lgos-end-user``, each the owner ``<gateway>.<end user>``: what it uploads
for one user only that user reads (and LGOS's service key acting for that
owner, as the graphs do); no other key may name an end user, and the
gateway key reaches no owner by ``X-Lgos-Owner``."""

from __future__ import annotations

import httpx
import openai
import pytest
from conftest import GATEWAY, GATEWAY_KEY, SERVICE_KEY, Tenant
from lgos_files_api.auth import KeyRing
from lgos_files_api.errors import InvalidRequestError, PermissionDeniedError
from lgos_files_api.settings import Settings
from openai import OpenAI
from pydantic import ValidationError

END_USER = "x-lgos-end-user"


def _gateway_client(server_url: str, end_user: str | None) -> OpenAI:
    return OpenAI(
        api_key=GATEWAY_KEY,
        base_url=f"{server_url}/v1",
        max_retries=0,
        default_headers={END_USER: end_user} if end_user else None,
    )


def test_each_end_user_of_a_gateway_key_reads_only_their_own_files(
    server, http: httpx.Client
) -> None:
    alice = _gateway_client(server.url, "alice-1")
    bob = _gateway_client(server.url, "bob-1")
    gateway = _gateway_client(server.url, None)

    uploaded = alice.files.create(
        file=("sales.csv", b"a,b\n1,2\n"), purpose="user_data"
    )
    refused = {}
    for name, other in {"bob": bob, "the gateway itself": gateway}.items():
        with pytest.raises(openai.NotFoundError) as missing:
            other.files.content(uploaded.id)
        refused[name] = missing.value.status_code
    as_owner = http.get(
        f"/v1/files/{uploaded.id}/content",
        headers={
            "Authorization": f"Bearer {SERVICE_KEY}",
            "X-Lgos-Owner": f"{GATEWAY}.alice-1",
        },
    )

    assert alice.files.content(uploaded.id).read() == b"a,b\n1,2\n"
    assert [f.id for f in alice.files.list()] == [uploaded.id]
    assert bob.files.list().data == []
    assert refused == {"bob": 404, "the gateway itself": 404}
    assert as_owner.status_code == 200
    assert as_owner.content == b"a,b\n1,2\n"


@pytest.mark.parametrize("who", ["owner", "service"])
def test_only_a_gateway_key_may_name_an_end_user(
    http: httpx.Client, tenant: Tenant, who: str
) -> None:
    headers = (
        tenant.headers
        if who == "owner"
        else {"Authorization": f"Bearer {SERVICE_KEY}", "X-Lgos-Owner": tenant.owner}
    )

    answer = http.get("/v1/files", headers={**headers, END_USER: "alice-1"})

    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "end_user_not_allowed"
    assert answer.json()["error"]["param"] == END_USER


def test_a_gateway_key_cannot_act_for_an_owner(
    http: httpx.Client, tenant: Tenant
) -> None:
    answer = http.get(
        "/v1/files",
        headers={
            "Authorization": f"Bearer {GATEWAY_KEY}",
            "X-Lgos-Owner": tenant.owner,
        },
    )

    assert answer.status_code == 401


@pytest.mark.parametrize("end_user", ["", "../alice", "alice@example.com", "a" * 60])
def test_a_gateway_key_must_name_a_valid_end_user(end_user: str) -> None:
    ring = KeyRing({"sk-alice": "alice"}, [SERVICE_KEY], {GATEWAY_KEY: GATEWAY})

    with pytest.raises(InvalidRequestError) as raised:
        ring.caller(f"Bearer {GATEWAY_KEY}", None, end_user)

    assert raised.value.param == END_USER
    assert ring.caller(f"Bearer {GATEWAY_KEY}", None, "a" * 58).owner == (
        f"{GATEWAY}.{'a' * 58}"
    )
    with pytest.raises(PermissionDeniedError):
        ring.caller("Bearer sk-alice", None, "alice")


@pytest.mark.parametrize(
    ("gateways", "owners", "message"),
    [
        ({"sk-a": "web.ui"}, {"sk-b": "bob"}, "must match"),
        ({"sk-a": "webui"}, {"sk-a": "bob"}, "cannot be two of"),
        ({"sk-a": "webui"}, {"sk-b": "webui.bob"}, "looks like an end user"),
    ],
)
def test_gateway_keys_that_could_be_mistaken_are_refused(
    gateways: dict[str, str], owners: dict[str, str], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(API_KEYS=owners, GATEWAY_KEYS=gateways)
