"""The Function acts for the signed-in user, and trusts nothing the request
says about where Open WebUI is.

* Each user (``__user__["id"]``) is named in ``x-lgos-end-user`` to LiteLLM
  (the stack's configuration forwards it to LGOS, whose gateway key acts for
  that user) and to the Files API: Alice's background run is a 404 to Bob.
* Attachments are read back only from the ``open_webui_url`` valve: with it
  unset, a forged Host (the request's ``base_url``) gets no request and no
  token; the Function says what to set.
* The upload cache is per user: another user naming Alice's Open WebUI file
  is read through Open WebUI with their own token (refused), never handed
  Alice's upload.
* A ``display_file`` id that is not a file id never becomes a URL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from lgos_testkit import ThreadServer
from owui_support import LITELLM_UI_KEY, UI_FILES_KEY, Recorder, chat, user

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(600)]

CSV = b"month,visitors,revenue\nJan,120,10.5\nFeb,340,22\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _owner(function_module: Any, user_id: str, **valves: Any) -> dict[str, Any]:
    return {"id": user_id, "valves": function_module.Pipe.UserValves(**valves)}


async def test_each_user_is_a_tenant_of_their_own(function_module, pipe, stack):
    settings = json.dumps({"lgos/background": {"steps": 1, "step_seconds": 0}})
    alice = _owner(function_module, "alice-1", background=True, settings=settings)
    stack.requests.clear()

    text = await chat(
        pipe, Recorder(), "lgos/background", [user("Report")], __user__=alice
    )
    (run_id,) = {
        path.removeprefix("/v1/responses/")
        for method, path in stack.requests
        if method == "GET" and path.startswith("/v1/responses/")
    }
    follow = f"{stack.gateway_url.removesuffix('/v1')}/lgos/v1/responses/{run_id}"
    async with httpx.AsyncClient(timeout=30) as http:
        seen = {
            who: (
                await http.get(
                    follow, headers=function_module.credentials(LITELLM_UI_KEY, who)
                )
            ).status_code
            for who in ("alice-1", "bob-1", None)
        }

    assert "LGOS:" not in text
    assert seen == {"alice-1": 200, "bob-1": 404, None: 404}


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A host an attacker picked: its URL and the requests it received."""
    received: list[dict[str, str]] = []
    app = FastAPI()

    @app.api_route("/{path:path}", methods=["GET", "POST"])
    async def record(path: str, request: Request) -> dict[str, str]:
        received.append({"path": path, **dict(request.headers)})
        return {}

    with ThreadServer(app) as server:
        yield server.url, received


async def test_a_forged_host_gets_no_request_and_no_token(
    function_module, pipe, elsewhere
):
    url, received = elsewhere
    pipe.valves.open_webui_url = ""
    forged = SimpleNamespace(
        base_url=f"{url}/",
        headers={"authorization": "Bearer the-users-session-token"},
        cookies={},
    )
    files = [{"type": "file", "id": "a-file-id", "name": "sales.csv"}]
    recorder = Recorder()

    text = await chat(
        pipe,
        recorder,
        "lgos/file-display",
        [user("Chart it")],
        __user__={"id": "alice-1"},
        __files__=files,
        __request__=forged,
    )

    assert received == []
    assert "open_webui_url" in text
    assert recorder.of_type("files") == []


@pytest.fixture
def alices_file(owui, admin_token) -> str:
    """``sales.csv`` uploaded to Open WebUI by its (only) signed-in user."""
    uploaded = httpx.post(
        f"{owui.url}/api/v1/files/",
        params={"process": "false"},
        headers={"Authorization": f"Bearer {admin_token}"},
        files={"file": ("sales.csv", CSV, "text/csv")},
        timeout=30,
    )
    uploaded.raise_for_status()
    return str(uploaded.json()["id"])


async def test_another_users_attachment_is_not_taken_from_the_cache(
    pipe, owui, admin_token, alices_file
):
    pipe.valves.open_webui_url = owui.url
    files = [{"type": "file", "id": alices_file, "name": "sales.csv"}]

    def as_user(token: str) -> SimpleNamespace:
        return SimpleNamespace(
            base_url=f"{owui.url}/",
            headers={"authorization": f"Bearer {token}"},
            cookies={},
        )

    alices, bobs = Recorder(), Recorder()
    await chat(
        pipe,
        alices,
        "lgos/file-display",
        [user("Chart the revenue")],
        __user__={"id": "alice-2"},
        __files__=files,
        __request__=as_user(admin_token),
    )
    text = await chat(
        pipe,
        bobs,
        "lgos/file-display",
        [user("Chart the revenue")],
        __user__={"id": "bob-2"},
        __files__=files,
        __request__=as_user("not-a-session-of-this-file"),
    )

    assert len(alices.of_type("files")) == 1
    assert bobs.of_type("files") == []
    assert "reading the attachment answered HTTP 401" in text


async def test_a_display_file_id_that_is_not_an_id_never_becomes_a_url(
    function_module, pipe, stack
):
    turn = function_module._Turn(pipe, {"model": "x"}, {"id": "alice-3"}, None, None)
    call = {
        "type": "function_call",
        "name": "display_file",
        "call_id": "call_1",
        "arguments": json.dumps(
            {"file_id": "../../health", "filename": "x", "title": "x"}
        ),
    }

    async with httpx.AsyncClient(timeout=30) as http:
        files = function_module.FilesApi(
            http,
            stack.files_url,
            function_module.credentials(UI_FILES_KEY, "alice-3"),
        )
        text, output = await turn.client_call(call, files)

    assert "'../../health' is not a file id" in text
    assert json.loads(output["output"])["displayed"] is False
