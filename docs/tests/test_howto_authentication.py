"""Authentication and tenancy: bearer keys mapped to tenants that never share runs."""

from __future__ import annotations

import gateway_users_client
import httpx
import pytest
import tenants_client
from conftest import expected_output

KEYS = '{"sk-alice-1": "alice", "sk-bob-1": "bob"}'
GATEWAY_KEYS = '{"sk-gateway": "webui"}'


@pytest.fixture
def tenants_server(serve, monkeypatch):
    monkeypatch.setenv("LGOS_API_KEYS", KEYS)
    return serve("tenants_app")


def test_keys_are_required_and_tenants_cannot_read_each_others_runs(
    tenants_server, capsys
):
    tenants_client.main(tenants_server.base_url)

    assert capsys.readouterr().out == expected_output("tenants_client.out")


def test_health_stays_open_and_every_answer_has_a_request_id(tenants_server):
    health = httpx.get(f"{tenants_server.base_url}/health", timeout=5)
    refused = httpx.get(
        f"{tenants_server.base_url}/models",
        headers={"X-Request-ID": "trace-42"},
        timeout=5,
    )

    assert health.status_code == 200
    assert health.headers["x-request-id"]
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert refused.headers["x-request-id"] == "trace-42"


def test_a_gateway_key_makes_each_end_user_a_tenant(serve, monkeypatch, capsys):
    monkeypatch.setenv("LGOS_API_KEYS", KEYS)
    monkeypatch.setenv("LGOS_GATEWAY_KEYS", GATEWAY_KEYS)
    server = serve("tenants_app")

    gateway_users_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("gateway_users_client.out")
