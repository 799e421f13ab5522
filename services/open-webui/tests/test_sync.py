"""``lgos-open-webui-sync`` against a real Open WebUI: install, idempotence,
removal of Functions it owns that left the repository, others untouched."""

from __future__ import annotations

import time
import uuid

import httpx
import pytest
from lgos_open_webui.bundle import MANAGED_KEY, function_sources
from owui_support import LITELLM_MASTER_KEY, UI_FILES_KEY, stored_reply

CSV = b"month,visitors,revenue\nJan,120,10.5\nFeb,340,22\nMar,95,17.25\n"

TINY_PIPE = (
    '"""\ntitle: {title}\n"""\n\n\n'
    "class Pipe:\n    def pipe(self, body):\n        return 'hi'\n"
)


class Admin:
    """Open WebUI's Functions API, read as the tests' admin."""

    def __init__(self, url, token):
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )

    def functions(self):
        return {f["id"]: f for f in self.get("/api/v1/functions/")}

    def get(self, path):
        response = self.http.get(path)
        response.raise_for_status()
        return response.json()

    def create(self, function_id, *, owned):
        meta = {"description": "made by a test"} | (
            {MANAGED_KEY: True} if owned else {}
        )
        form = {
            "id": function_id,
            "name": function_id,
            "content": TINY_PIPE.format(title=function_id),
            "meta": meta,
        }
        self.http.post("/api/v1/functions/create", json=form).raise_for_status()

    def stored_message(self, message_id):
        return stored_reply(self.http, message_id)

    def delete(self, function_id):
        self.http.delete(f"/api/v1/functions/id/{function_id}/delete")


@pytest.fixture
def admin(owui, admin_token):
    client = Admin(owui.url, admin_token)
    yield client
    client.http.close()


@pytest.fixture
def flags(owui, stack):
    return [
        "--url",
        owui.url,
        "--gateway-url",
        stack.gateway_url,
        "--gateway-key",
        LITELLM_MASTER_KEY,
        "--files-url",
        stack.files_url,
        "--files-key",
        UI_FILES_KEY,
    ]


@pytest.fixture
def installed(sync_cli, flags):
    result = sync_cli(*flags)
    assert result.code == 0, result.err
    return result


def test_the_first_run_installs_activates_and_configures_the_function(
    sync_cli, flags, admin
):
    admin.delete("lgos_responses")  # whatever an earlier test left

    result = sync_cli(*flags)

    assert result.code == 0, result.err
    assert "will create lgos_responses: LGOS Responses" in result.out
    assert "will set valves of lgos_responses" in result.out
    assert "will activate lgos_responses" in result.out
    function = admin.get("/api/v1/functions/id/lgos_responses")
    assert function["type"] == "pipe"
    assert function["is_active"] is True
    assert function["meta"][MANAGED_KEY] is True
    (source,) = function_sources()
    assert function["content"] == source.content
    valves = admin.get("/api/v1/functions/id/lgos_responses/valves")
    assert valves["gateway_url"] == flags[3]
    assert valves["files_key"] == UI_FILES_KEY


def test_a_second_run_changes_nothing_and_says_so(sync_cli, flags, admin, installed):
    before = admin.get("/api/v1/functions/id/lgos_responses")

    result = sync_cli(*flags)

    assert result.code == 0
    assert result.out.strip().endswith("is up to date.")
    assert admin.get("/api/v1/functions/id/lgos_responses") == before


def test_open_webui_lists_the_graphs_through_the_function(admin, installed):
    models = {m["id"]: m for m in admin.get("/api/models")["data"]}

    assert {
        "lgos_responses.lgos/simple",
        "lgos_responses.lgos/citations",
        "lgos_responses.lgos/interrupts",
        "lgos_responses.lgos/file-display",
    } <= set(models)
    assert models["lgos_responses.lgos/simple"]["name"] == "LGOS · lgos/simple"
    assert models["lgos_responses.lgos/simple"]["pipe"] == {"type": "pipe"}
    assert "lgos/simple" in models  # the plain connection lists it too


def test_an_owned_function_that_left_the_repository_is_deleted(
    sync_cli, flags, admin, installed
):
    admin.create("lgos_retired", owned=True)

    result = sync_cli(*flags)

    assert "will delete lgos_retired: not in the repository" in result.out
    assert "lgos_retired" not in admin.functions()


def test_a_function_the_sync_does_not_own_is_left_alone(
    sync_cli, flags, admin, installed
):
    admin.create("handmade_pipe", owned=False)
    try:
        result = sync_cli(*flags)

        assert result.out.strip().endswith("is up to date.")
        assert "handmade_pipe" in admin.functions()
    finally:
        admin.delete("handmade_pipe")


def test_a_changed_valve_is_the_only_change_and_other_valves_stay(
    sync_cli, flags, admin, installed
):
    result = sync_cli(*flags, "--models", "lgos/simple")

    assert result.out.splitlines()[0] == "will set valves of lgos_responses: models"
    valves = admin.get("/api/v1/functions/id/lgos_responses/valves")
    assert valves["models"] == "lgos/simple"
    assert valves["gateway_key"] == LITELLM_MASTER_KEY
    sync_cli(*flags, "--models", "")


def test_models_the_plain_connection_lists_are_left_out_of_the_function(
    sync_cli, flags, admin, installed
):
    try:
        result = sync_cli(*flags, "--skip-models", "lgos/simple, lgos/citations")

        assert result.code == 0, result.err
        models = {m["id"] for m in admin.get("/api/models")["data"]}
        # Each graph once: the two named through the plain connection only.
        assert {"lgos/simple", "lgos/citations"} <= models
        assert "lgos_responses.lgos/simple" not in models
        assert "lgos_responses.lgos/citations" not in models
        assert "lgos_responses.lgos/interrupts" in models
    finally:
        sync_cli(*flags, "--skip-models", "")
        # Open WebUI answers chats from the model list it read last.
        restored = {m["id"] for m in admin.get("/api/models")["data"]}
        assert "lgos_responses.lgos/citations" in restored


def test_a_dry_run_reports_and_changes_nothing(sync_cli, flags, admin, installed):
    admin.delete("lgos_responses")

    result = sync_cli(*flags, "--dry-run")

    assert result.code == 0
    assert "would create lgos_responses" in result.out
    assert "lgos_responses" not in admin.functions()


def test_settings_come_from_the_environment_and_an_admin_token(
    sync_cli, owui, stack, admin_token, admin, installed
):
    environ = {
        "LGOS_OPEN_WEBUI_URL": owui.url,
        "LGOS_OPEN_WEBUI_TOKEN": admin_token,
        "LGOS_OPEN_WEBUI_GATEWAY_URL": stack.gateway_url,
    }

    result = sync_cli(environ=environ)

    assert result.code == 0, result.err
    assert result.out.strip().endswith("is up to date.")


def test_a_foreign_function_with_our_id_is_refused(sync_cli, flags, admin, installed):
    admin.delete("lgos_responses")
    admin.create("lgos_responses", owned=False)
    try:
        result = sync_cli(*flags)

        assert result.code == 2
        assert "does not own" in result.err
    finally:
        admin.delete("lgos_responses")


def test_an_unreachable_open_webui_is_a_clear_error(sync_cli):
    result = sync_cli("--url", "http://127.0.0.1:9")

    assert result.code == 2
    assert result.err.startswith("lgos-open-webui-sync: POST http://127.0.0.1:9/")
    assert "Connection refused" in result.err or "connect" in result.err.lower()


def test_a_wrong_token_is_a_clear_error(sync_cli, owui):
    result = sync_cli("--url", owui.url, "--token", "not-a-token")

    assert result.code == 2
    assert "answered 401" in result.err


def test_a_missing_url_is_a_usage_error(sync_cli):
    result = sync_cli()

    assert result.code == 2
    assert "--url" in result.err


def test_a_chat_through_the_installed_function_stores_status_sources_and_answer(
    admin, installed
):
    question = "How do I upload files to the Files API?"
    reply_id = str(uuid.uuid4())
    body = {
        "model": "lgos_responses.lgos/citations",
        "messages": [{"role": "user", "content": question}],
        "stream": True,
        "parent_id": None,
        "id": reply_id,
        "user_message": {"id": str(uuid.uuid4()), "role": "user", "content": question},
    }

    admin.http.post("/api/chat/completions", json=body).raise_for_status()
    message = admin.stored_message(reply_id)

    assert "[1]" in message["content"]
    assert "Searching the docs" not in message["content"]
    statuses = [status["description"] for status in message["statusHistory"]]
    assert statuses[0] == f"Searching the docs for “{question}”"
    assert message["statusHistory"][-1]["done"] is True
    assert message["sources"][0]["source"]["url"].startswith("http://127.0.0.1:")


def test_an_attachment_in_open_webui_reaches_the_graph_and_the_chart_is_stored(
    admin, installed
):
    uploaded = admin.http.post(
        "/api/v1/files/",
        params={"process": "false"},
        files={"file": ("sales.csv", CSV, "text/csv")},
    )
    uploaded.raise_for_status()
    file_id = uploaded.json()["id"]
    reply_id = str(uuid.uuid4())
    attached = [{"type": "file", "id": file_id, "name": "sales.csv"}]
    body = {
        "model": "lgos_responses.lgos/file-display",
        "messages": [{"role": "user", "content": "Chart the revenue"}],
        "files": attached,
        "stream": True,
        "parent_id": None,
        "id": reply_id,
        "user_message": {
            "id": str(uuid.uuid4()),
            "role": "user",
            "content": "Chart the revenue",
            "files": attached,
        },
    }

    admin.http.post("/api/chat/completions", json=body).raise_for_status()
    message = admin.stored_message(reply_id)

    (chart,) = message["files"]
    assert chart["type"] == "image"
    assert chart["url"].startswith(("data:image/svg+xml;base64,", "/api/v1/files/"))
    assert "*revenue by month* (sales-chart.svg)" in message["content"]


def test_waiting_for_an_open_webui_that_never_comes_up_gives_up_clearly(sync_cli):
    started = time.monotonic()

    result = sync_cli("--url", "http://127.0.0.1:9", "--wait", "1.5")

    assert result.code == 2
    assert "http://127.0.0.1:9/health did not answer within 1.5 s" in result.err
    assert 1.0 <= time.monotonic() - started < 10


def test_waiting_for_a_running_open_webui_goes_straight_on(sync_cli, flags, installed):
    result = sync_cli(*flags, "--wait", "60")

    assert result.code == 0
    assert result.out.strip().endswith("is up to date.")
