"""The whole native stack, as ``just up native`` starts it, once for this module.

``lgos-demo-stack`` runs as a subprocess on free ports in a temp state folder,
with LiteLLM and Open WebUI from their tool environments (``.tools``). The
tests reach every service over HTTP with real clients, re-sync LiteLLM's
model list, and finally stop the stack with ``lgos-demo-stack down`` and look
for any process it left behind, by the PIDs (and process sessions) it
recorded. Starting takes about a minute (Open WebUI ~30 s, LiteLLM ~16 s,
slower on a busy machine); the module's tests share one start.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
import yaml
from lgos_demos.settings import DEFAULT_FILES_API_KEY
from lgos_stack.processes import pid_alive
from lgos_testkit.stack import (
    RunningStack,
    postgres_dir,
    stack_env,
    start_stack,
    stop_stack,
)
from openai import OpenAI

pytestmark = pytest.mark.timeout(480)

TOOLS = Path(__file__).resolve().parents[3] / ".tools"
BODY_LIMIT = 4_000_000
EVERY_SERVICE = {
    "demo model",
    "search",
    "SeaweedFS",
    "Files API",
    "PostgreSQL",
    "database setup",
    "demo API",
    "background worker",
    "model sync",
    "LiteLLM",
    "Chainlit",
    "Open WebUI",
    "Open WebUI functions",
    "Prometheus",
}


def control(stack: RunningStack, *args: str) -> subprocess.CompletedProcess[str]:
    """``lgos-demo-stack <command> --state-dir`` for this stack."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_stack",
            *args,
            f"--state-dir={stack.state_dir}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def recorded_pids(stack: RunningStack) -> dict[str, int]:
    state = json.loads((stack.state_dir / "stack.json").read_text())
    return {name: s["pid"] for name, s in state["services"].items()}


def sessions_alive(session_ids: set[int]) -> list[str]:
    """Processes still in a session a recorded child led (its own descendants)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        state, session = fields[0], int(fields[3])
        if session in session_ids and state != "Z":
            left.append(f"{stat.parent.name} (session {session})")
    return left


@pytest.fixture(scope="module")
def full_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    for tool in ("litellm", "open-webui"):
        if not (TOOLS / tool / "bin" / tool).is_file():
            pytest.fail(
                f"{tool}'s tool environment is missing under {TOOLS}: "
                f"run `bash scripts/install-{tool}.sh` (or `just tools`)"
            )
    postgres = postgres_dir()
    running = start_stack(
        tmp_path_factory.mktemp("full-stack"),
        # A body limit a test can pass cheaply (the default is 32 MB).
        env=stack_env(LGOS_MAX_REQUEST_BYTES=str(BODY_LIMIT)),
        postgres=postgres,
        timeout=360,
    )
    try:
        yield running
    finally:
        # Normally `down` already stopped it (test_down_...); this is the net.
        stop_stack(running.process, running.pids)
        shutil.rmtree(postgres, ignore_errors=True)


@pytest.fixture(scope="module")
def litellm(full_stack: RunningStack) -> Iterator[OpenAI]:
    """The official SDK against LiteLLM, with the key the stack generated."""
    state = json.loads((full_stack.state_dir / "stack.json").read_text())
    key = Path(state["litellm_master_key_file"]).read_text().strip()
    with OpenAI(
        base_url=full_stack.urls["LiteLLM"], api_key=key, max_retries=0, timeout=60
    ) as client:
        yield client


def test_every_service_of_the_stack_answers_its_health_check(full_stack):
    state = json.loads((full_stack.state_dir / "stack.json").read_text())
    status = control(full_stack, "status")

    assert set(state["services"]) == EVERY_SERVICE
    assert status.returncode == 0, status.stdout + status.stderr
    with httpx.Client(timeout=10) as http:
        for name, service in state["services"].items():
            if service["health"]:
                answer = http.get(service["health"])
                # SeaweedFS's S3 refuses anonymous requests: a 403 is alive.
                assert answer.status_code < 500, name
                if name != "SeaweedFS":
                    assert answer.status_code == 200, name
            elif not service["oneshot"]:
                assert pid_alive(service["pid"]), name


def test_a_chat_reaches_a_demo_graph_through_litellm(litellm):
    ids = {model.id for model in litellm.models.list()}
    reply = litellm.chat.completions.create(
        model="lgos/simple",
        messages=[{"role": "user", "content": "hello through the gateway"}],
    )

    assert {"lgos/simple", "lgos/citations", "lgos/interrupts"} <= ids
    assert "hello through the gateway" in (reply.choices[0].message.content or "")


def test_a_megabyte_question_to_citations_through_litellm_is_answered(litellm):
    # It used to be a 500 after LiteLLM's retries: the whole question went
    # into the demo search's URL.
    document = "How do I upload files to the Files API? " * 26_000

    response = litellm.responses.create(model="lgos/citations", input=document)

    assert len(document) > 1_000_000
    assert response.status == "completed"
    assert response.output[-1].content[0].annotations


def test_lgos_s_body_limit_reads_as_lgos_s_own_message_through_litellm(litellm):
    too_long = "x" * (BODY_LIMIT + 1)
    with pytest.raises(openai.APIStatusError) as responses:
        litellm.responses.create(model="lgos/simple", input=too_long)
    with pytest.raises(openai.APIStatusError) as chat:
        litellm.chat.completions.create(
            model="lgos/simple", messages=[{"role": "user", "content": too_long}]
        )

    for refused in (responses.value, chat.value):
        assert refused.status_code == 413
        # The SDK prefixes the status; LiteLLM's wrapping (the exception
        # class, the raw JSON, the fallback note) is gone.
        assert refused.message == (
            f"Error code: 413 - The request body is larger than the limit of "
            f"{BODY_LIMIT} bytes."
        )
        assert refused.type == "invalid_request_error"


def test_a_wrong_key_at_the_stack_s_litellm_is_a_401(full_stack):
    with (
        OpenAI(
            base_url=full_stack.urls["LiteLLM"], api_key="sk-wrong", max_retries=0
        ) as client,
        pytest.raises(openai.AuthenticationError) as refused,
    ):
        client.models.list()

    assert refused.value.status_code == 401
    assert "Invalid API key for the LGOS gateway" in refused.value.message


def test_a_file_round_trips_through_the_files_api(full_stack):
    with OpenAI(
        base_url=full_stack.files_url,
        api_key=DEFAULT_FILES_API_KEY,
        max_retries=0,
        timeout=30,
    ) as files:
        stored = files.files.create(
            file=("notes.txt", b"kept by the stack\n", "text/plain"),
            purpose="user_data",
        )
        content = files.files.content(stored.id).read()

    assert stored.filename == "notes.txt"
    assert content == b"kept by the stack\n"


def test_both_uis_list_the_graphs_and_open_webui_lists_each_once_via_its_function(
    full_stack,
):
    with httpx.Client(base_url=full_stack.urls["Chainlit"], timeout=30) as browser:
        # Chainlit signs every new browser in as its own guest.
        browser.post("/auth/header").raise_for_status()
        chainlit = browser.get("/project/settings").json()
    with httpx.Client(timeout=30) as http:
        webui = full_stack.urls["Open WebUI"]
        # With WEBUI_AUTH=False, signing in with no credentials gives the admin.
        token = http.post(
            f"{webui}/api/v1/auths/signin", json={"email": "", "password": ""}
        ).json()["token"]
        admin = {"Authorization": f"Bearer {token}"}
        models = http.get(f"{webui}/api/models", headers=admin).json()["data"]
        functions = http.get(f"{webui}/api/v1/functions/", headers=admin).json()

    assert "lgos/simple" in {p["name"] for p in chainlit["chatProfiles"]}
    # Each graph once, through the LGOS Function (the plain connection is off).
    listed = {m["id"] for m in models}
    assert "lgos_responses.lgos/simple" in listed
    assert "lgos/simple" not in listed
    # Installed by the "Open WebUI functions" one-shot, and switched on.
    assert {f["id"]: f["is_active"] for f in functions}.get("lgos_responses")


def test_sync_models_rewrites_litellm_s_list_and_restarts_litellm_only(
    full_stack, litellm
):
    config = full_stack.state_dir / "litellm" / "config.yaml"
    document = yaml.safe_load(config.read_text())
    simple = next(e for e in document["model_list"] if e["model_name"] == "lgos/simple")
    # A stale file: a graph LGOS no longer has (owned by the sync), one it
    # does have missing, and a model a person added by hand.
    retired = json.loads(json.dumps(simple)) | {"model_name": "lgos/retired"}
    by_hand = {
        "model_name": "handwritten/simple",
        "litellm_params": simple["litellm_params"],
    }
    document["model_list"] = [
        e for e in document["model_list"] if e["model_name"] != "lgos/simple"
    ] + [retired, by_hand]
    config.write_text(yaml.safe_dump(document, sort_keys=False))
    before = recorded_pids(full_stack)

    result = control(full_stack, "sync-models")

    after = recorded_pids(full_stack)
    served = {model.id for model in litellm.models.list()}
    assert result.returncode == 0, result.stdout + result.stderr
    assert "LiteLLM now serves:" in result.stdout
    assert after["LiteLLM"] != before["LiteLLM"]
    assert not pid_alive(before["LiteLLM"])
    unchanged = {n for n in before if n not in ("LiteLLM", "model sync")}
    assert {n: after[n] for n in unchanged} == {n: before[n] for n in unchanged}
    assert "lgos/simple" in served
    assert "handwritten/simple" in served  # LiteLLM reloaded the file
    assert "lgos/retired" not in served
    assert "lgos/retired" not in config.read_text()


def test_down_stops_every_process_the_stack_started(full_stack):
    pids = recorded_pids(full_stack) | full_stack.pids
    supervisor = full_stack.process.pid

    result = control(full_stack, "down")
    full_stack.process.wait(timeout=60)

    assert result.returncode == 0, result.stdout + result.stderr
    assert full_stack.process.returncode == 0
    assert not [name for name, pid in pids.items() if pid_alive(pid)]
    assert not sessions_alive(set(pids.values()) | {supervisor})
    assert not (full_stack.state_dir / "stack.json").exists()
    assert os.path.exists(full_stack.state_dir / "logs" / "open-webui.log")
