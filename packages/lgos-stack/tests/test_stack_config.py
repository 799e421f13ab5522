"""Fast checks of the stack's plan, its start-up checks and its supervisor.

No LiteLLM or Open WebUI starts here: bad configuration must stop
``lgos-demo-stack`` before anything starts, and the supervisor's rerun and
restart are exercised on tiny child processes.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langgraph_openai_serve import ApiKeys
from lgos_demos.settings import DEFAULT_FILES_API_KEY
from lgos_stack.gateway import ConfigError, master_key
from lgos_stack.net import free_ports
from lgos_stack.preflight import configuration_problems
from lgos_stack.processes import pid_alive
from lgos_stack.services import PORT_FLAGS, StackOptions, plan_stack
from lgos_stack.supervisor import Service, StackError, Supervisor
from lgos_testkit.stack import stack_env


def run_stack(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``lgos-demo-stack`` on free ports; expected to stop before starting."""
    environ = stack_env(**env)
    flags = list(PORT_FLAGS.values())
    ports = free_ports(len(flags))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_stack",
            *(f"{flag}={port}" for flag, port in zip(flags, ports, strict=True)),
            *args,
        ],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def refusing_provider() -> Iterator[str]:
    """An OpenAI-compatible base URL that answers 401 without a valid key."""

    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            accepted = self.headers.get("Authorization") == "Bearer sk-right"
            self.send_response(200 if accepted else 401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"object": "list", "data": []}')

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_model_provider_stops_the_stack_before_anything_starts(
    tmp_path,
):
    url = f"http://127.0.0.1:{free_ports(1)[0]}/v1"

    result = run_stack(f"--state-dir={tmp_path}", DEMO_MODEL_BASE_URL=url)

    assert result.returncode != 0
    assert f"DEMO_MODEL_BASE_URL={url} does not answer" in result.stderr
    assert "unset it to start the offline demo model" in result.stderr
    assert not (tmp_path / "logs").exists()
    assert not (tmp_path / "stack.json").exists()


def test_a_provider_that_wants_a_key_asks_for_demo_model_api_key(
    tmp_path, refusing_provider
):
    options = StackOptions(state_dir=tmp_path, without=frozenset({"litellm"}))
    without_key = {"DEMO_MODEL_BASE_URL": refusing_provider}
    wrong_key = without_key | {"DEMO_MODEL_API_KEY": "sk-wrong"}
    right_key = without_key | {"DEMO_MODEL_API_KEY": "sk-right"}

    def problems(environ: dict[str, str]) -> list[str]:
        return configuration_problems(
            options, plan_stack(options, environ).services, environ
        )

    assert problems(without_key) == [
        f"DEMO_MODEL_BASE_URL={refusing_provider} wants an API key (401): "
        "set DEMO_MODEL_API_KEY"
    ]
    assert "refused DEMO_MODEL_API_KEY" in problems(wrong_key)[0]
    assert problems(right_key) == []


def test_a_files_api_that_wants_a_key_asks_for_demo_files_api_key(
    tmp_path, refusing_provider
):
    options = StackOptions(state_dir=tmp_path, without=frozenset({"litellm"}))
    environ = {"DEMO_FILES_URL": refusing_provider}

    problems = configuration_problems(
        options, plan_stack(options, environ).services, environ
    )

    assert problems == [
        f"DEMO_FILES_URL={refusing_provider} wants an API key (401): "
        "set DEMO_FILES_API_KEY to a service key it accepts "
        "(LGOS_FILES_SERVICE_KEYS)"
    ]


def test_litellm_reaches_the_demo_api_with_its_own_gateway_key(tmp_path):
    options = StackOptions(state_dir=tmp_path)
    protected = {"LGOS_API_KEYS": "sk-alpha,sk-beta"}

    services = {s.name: s for s in plan_stack(options, protected).services}
    again = {s.name: s for s in plan_stack(options, {}).services}

    gateway_key = services["LiteLLM"].env["LGOS_API_KEY"]
    keys = ApiKeys.parse(
        protected["LGOS_API_KEYS"],
        gateways=services["demo API"].env["LGOS_GATEWAY_KEYS"],
    )
    holder = keys.holder_for(gateway_key)
    assert holder is not None
    assert (holder.principal, holder.gateway) == ("gateway", True)
    assert services["model sync"].env["LGOS_API_KEY"] == gateway_key
    assert services["model sync"].argv[-1].endswith("/v1,LGOS_API_KEY")
    assert again["LiteLLM"].env["LGOS_API_KEY"] == gateway_key  # made once
    assert (tmp_path / "litellm" / "lgos-key").stat().st_mode & 0o077 == 0
    with pytest.raises(ConfigError, match="looks like an end user"):
        plan_stack(options, {"LGOS_API_KEYS": '{"sk-x": "gateway.bob"}'})


def test_a_malformed_demo_setting_is_named(tmp_path):
    result = run_stack(
        f"--state-dir={tmp_path}", "--without=litellm", DEMO_SEARCH_URL="search.local"
    )

    assert result.returncode != 0
    assert "DEMO_SEARCH_URL" in result.stderr
    assert "http:// or https://" in result.stderr


def test_a_master_key_litellm_would_not_accept_says_what_to_set(tmp_path):
    result = run_stack(f"--state-dir={tmp_path}", LITELLM_MASTER_KEY="letmein")

    assert result.returncode != 0
    assert "LITELLM_MASTER_KEY must start with 'sk-'" in result.stderr
    assert str(tmp_path / "litellm" / "master-key") in result.stderr


def test_the_master_key_is_generated_once_unless_configured(tmp_path):
    first = master_key(tmp_path, {})
    again = master_key(tmp_path, {})
    configured = master_key(tmp_path, {"LITELLM_MASTER_KEY": "sk-from-the-env"})

    assert first == again
    assert first.startswith("sk-")
    assert (tmp_path / "litellm" / "master-key").stat().st_mode & 0o077 == 0
    assert configured == "sk-from-the-env"
    with pytest.raises(ConfigError):
        master_key(tmp_path, {"LITELLM_MASTER_KEY": "no-prefix"})


def test_missing_tool_environments_say_which_script_to_run(tmp_path):
    options = StackOptions(state_dir=tmp_path, tools_dir=tmp_path / "no-tools")
    services = plan_stack(options, {}).services

    problems = configuration_problems(options, services, {})

    assert len(problems) == 2
    assert "LiteLLM is not installed" in problems[0]
    assert "`bash scripts/install-litellm.sh`" in problems[0]
    assert "--without open-webui" in problems[1]
    assert "`bash scripts/install-open-webui.sh`" in problems[1]


def test_a_busy_litellm_port_names_the_service_and_the_flag_that_moves_it(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_stack(f"--state-dir={tmp_path}", f"--litellm-port={port}")

    assert result.returncode != 0
    assert f"LiteLLM (port {port}; --litellm-port moves it)" in result.stderr


def test_both_uis_are_routed_through_litellm_after_the_model_sync(tmp_path):
    options = StackOptions(
        state_dir=tmp_path, port=1, litellm_port=2, chainlit_port=3, files_port=4
    )
    services = {s.name: s for s in plan_stack(options, {}).services}
    key = master_key(tmp_path, {})

    sync, litellm = services["model sync"], services["LiteLLM"]
    chainlit, webui = services["Chainlit"], services["Open WebUI"]
    assert sync.oneshot
    assert sync.after == ("demo API",)
    assert "--deployment=main=lgos,http://127.0.0.1:1/v1,LGOS_API_KEY" in sync.argv
    assert f"--config={tmp_path / 'litellm' / 'config.yaml'}" in sync.argv
    assert litellm.after == ("model sync",)
    assert litellm.env["LITELLM_MASTER_KEY"] == key
    assert litellm.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert chainlit.after == webui.after == ("LiteLLM",)
    assert chainlit.env["LGOS_CHAINLIT_GATEWAY_URL"] == "http://127.0.0.1:2/v1"
    # The UIs hold the UI key, which runs graphs and administers nothing.
    ui = litellm.env["LGOS_GATEWAY_UI_KEYS"]
    assert ui != key
    assert chainlit.env["LGOS_CHAINLIT_GATEWAY_KEY"] == ui
    assert chainlit.env["LGOS_CHAINLIT_FILES_URL"] == "http://127.0.0.1:4/v1"
    assert webui.env["OPENAI_API_BASE_URL"] == "http://127.0.0.1:2/v1"
    assert webui.env["OPENAI_API_KEY"] == ui
    assert webui.env["FORWARD_USER_INFO_HEADER_USER_ID"] == "X-Lgos-End-User"
    assert webui.env["RAG_EMBEDDING_ENGINE"] == "openai"
    assert webui.env["ENABLE_PERSISTENT_CONFIG"] == "False"
    assert webui.env["WEBUI_AUTH"] == "False"
    assert webui.env["DATA_DIR"] == str(tmp_path / "open-webui")
    functions = services["Open WebUI functions"]
    assert functions.oneshot
    assert functions.after == ("Open WebUI",)
    assert functions.env["LGOS_OPEN_WEBUI_GATEWAY_URL"] == "http://127.0.0.1:2/v1"
    assert functions.env["LGOS_OPEN_WEBUI_FILES_URL"] == "http://127.0.0.1:4/v1"
    assert functions.env["LGOS_OPEN_WEBUI_GATEWAY_KEY"] == ui
    # Both UIs upload as their user with the Files API's gateway key.
    files_gateways = json.loads(services["Files API"].env["LGOS_FILES_GATEWAY_KEYS"])
    assert files_gateways == {chainlit.env["LGOS_CHAINLIT_FILES_KEY"]: "gateway"}
    assert functions.env["LGOS_OPEN_WEBUI_FILES_KEY"] in files_gateways


def test_open_webui_lists_each_graph_once_through_the_operators_choice(tmp_path):
    options = StackOptions(state_dir=tmp_path)
    default = {s.name: s for s in plan_stack(options, {}).services}
    chosen = {
        s.name: s
        for s in plan_stack(
            options, {"OPEN_WEBUI_PLAIN_MODELS": " lgos/simple,lgos/citations "}
        ).services
    }

    # By default only the Function lists graphs: the connection is off.
    assert default["Open WebUI"].env["ENABLE_OPENAI_API"] == "False"
    assert default["Open WebUI functions"].env["LGOS_OPEN_WEBUI_SKIP_MODELS"] == ""
    assert default["Open WebUI"].env["DEFAULT_MODELS"] == (
        "lgos_responses.lgos/citations"
    )
    # Chosen graphs: listed by the connection alone, left out of the Function.
    webui = chosen["Open WebUI"].env
    assert "ENABLE_OPENAI_API" not in webui
    assert json.loads(webui["OPENAI_API_CONFIGS"]) == {
        "0": {"enable": True, "model_ids": ["lgos/simple", "lgos/citations"]}
    }
    assert webui["DEFAULT_MODELS"] == "lgos/citations"
    skipped = chosen["Open WebUI functions"].env["LGOS_OPEN_WEBUI_SKIP_MODELS"]
    assert skipped == "lgos/simple,lgos/citations"


def test_the_demo_api_sends_progress_as_reasoning_unless_turned_off(tmp_path):
    # Open WebUI's plain connection shows reasoning_content as its reasoning
    # block: the stack turns the option on, an explicit setting wins.
    options = StackOptions(state_dir=tmp_path)
    default = {s.name: s for s in plan_stack(options, {}).services}
    off = {
        s.name: s
        for s in plan_stack(
            options, {"LGOS_CHAT_STATUS_AS_REASONING": "false"}
        ).services
    }

    assert default["demo API"].env["LGOS_CHAT_STATUS_AS_REASONING"] == "true"
    assert off["demo API"].env["LGOS_CHAT_STATUS_AS_REASONING"] == "false"


def test_without_litellm_the_sync_and_both_uis_are_left_out(tmp_path):
    options = StackOptions(state_dir=tmp_path, without=frozenset({"litellm"}))

    names = {s.name for s in plan_stack(options, {}).services}

    assert not names & {
        "model sync",
        "LiteLLM",
        "Chainlit",
        "Open WebUI",
        "Open WebUI functions",
    }
    assert "demo API" in names


def test_batches_use_the_stack_s_files_api_as_the_demo_api_s_tenant(tmp_path):
    options = StackOptions(state_dir=tmp_path)
    services = {s.name: s for s in plan_stack(options, {}).services}
    again = {s.name: s for s in plan_stack(options, {}).services}

    files = services["Files API"].env
    service_keys = json.loads(files["LGOS_FILES_SERVICE_KEYS"])
    for name in ("demo API", "background worker"):
        env = services[name].env
        assert env["LGOS_BATCH_FILES_URL"] == services["Files API"].url, name
        assert service_keys == [env["LGOS_BATCH_FILES_API_KEY"]], name
    # The graphs act for each request's tenant with the service key too;
    # the demo's files key is the tenant of a demo API without API keys.
    assert service_keys == [services["demo API"].env["DEMO_FILES_API_KEY"]]
    assert json.loads(files["LGOS_FILES_API_KEYS"]) == {
        DEFAULT_FILES_API_KEY: "default"
    }
    # Generated once for the state folder, owner-only.
    assert (
        again["Files API"].env["LGOS_FILES_SERVICE_KEYS"]
        == files["LGOS_FILES_SERVICE_KEYS"]
    )
    assert (tmp_path / "files" / "service-key").stat().st_mode & 0o077 == 0


def test_with_api_keys_each_key_opens_the_files_api_as_its_principal(tmp_path):
    options = StackOptions(state_dir=tmp_path)
    keys = {"sk-alice-key": "alice", "sk-bob-key": "bob"}

    planned = plan_stack(options, {"LGOS_API_KEYS": json.dumps(keys)})
    listed = plan_stack(options, {"LGOS_API_KEYS": "sk-carol-key"})

    files = next(s for s in planned.services if s.name == "Files API").env
    owners = json.loads(files["LGOS_FILES_API_KEYS"])
    assert {key: owners[key] for key in keys} == keys
    assert "default" in owners.values()  # the graphs' and the UIs' key
    plain = next(s for s in listed.services if s.name == "Files API").env
    principal = ApiKeys.parse("sk-carol-key").principal_for("sk-carol-key")
    assert json.loads(plain["LGOS_FILES_API_KEYS"])["sk-carol-key"] == principal
    with pytest.raises(ConfigError, match="LGOS_API_KEYS"):
        plan_stack(options, {"LGOS_API_KEYS": "{}"})


def test_an_external_files_api_leaves_batches_to_the_operator(tmp_path):
    plan = plan_stack(
        StackOptions(state_dir=tmp_path),
        {"DEMO_FILES_URL": "http://files.example/v1"},
    )

    api = next(s for s in plan.services if s.name == "demo API")
    assert "LGOS_BATCH_FILES_URL" not in api.env
    assert any("LGOS_BATCH_FILES_API_KEY" in note for note in plan.notes)


# ------------------------------------------------------------- supervisor


def _http_server(port: int) -> Service:
    return Service(
        name="web",
        argv=[sys.executable, "-m", "http.server", str(port), "--bind=127.0.0.1"],
        port=port,
        url=f"http://127.0.0.1:{port}",
        health_url=f"http://127.0.0.1:{port}/",
        env={"PYTHONUNBUFFERED": "1"},
    )


def _counter(path: Path, *, fail: Path) -> Service:
    """A one-shot that appends a line to ``path``; fails once ``fail`` exists."""
    script = (
        "import pathlib, sys\n"
        f"if pathlib.Path({str(fail)!r}).exists(): sys.exit('the catalog is gone')\n"
        f"with open({str(path)!r}, 'a') as out: out.write('run\\n')\n"
    )
    return Service(
        name="sync",
        argv=[sys.executable, "-c", script],
        port=None,
        url="(one-shot)",
        oneshot=True,
    )


def test_rerun_and_restart_replace_only_the_named_children(tmp_path):
    runs, fail = tmp_path / "runs", tmp_path / "fail"
    web = _http_server(free_ports(1)[0])
    supervisor = Supervisor(
        [_counter(runs, fail=fail), web], tmp_path / "logs", startup_timeout=30
    )
    try:
        supervisor.start()
        before = supervisor.pids()
        supervisor.rerun("sync")
        supervisor.restart("web")
        after = supervisor.pids()
        fail.touch()
        with pytest.raises(StackError, match="the catalog is gone"):
            supervisor.rerun("sync")
    finally:
        supervisor.stop()

    assert runs.read_text() == "run\nrun\n"
    assert after["web"] != before["web"]
    assert not pid_alive(before["web"])
    assert not pid_alive(after["web"])
    # The restarted server's log follows the first one's.
    assert (tmp_path / "logs" / "web.log").read_text().count("Serving HTTP") == 2


# ------------------------------------------------------------- stack.json


def test_a_second_stack_on_the_same_state_folder_is_refused(tmp_path):
    # Stands in for a running supervisor: its command line names the stack.
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "lgos_stack"]
    )
    try:
        (tmp_path / "stack.json").write_text(
            json.dumps({"pid": sleeper.pid, "services": {}})
        )
        result = run_stack(f"--state-dir={tmp_path}", "--without=litellm")
    finally:
        sleeper.kill()
        sleeper.wait()

    assert result.returncode != 0
    assert f"a stack already runs for {tmp_path} (supervisor PID {sleeper.pid})" in (
        result.stderr
    )


def test_down_on_a_stack_that_is_gone_says_so(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / "stack.json").write_text(json.dumps({"pid": gone.pid, "services": {}}))

    result = subprocess.run(
        [sys.executable, "-m", "lgos_stack", "down", f"--state-dir={tmp_path}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    nothing = subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_stack",
            "status",
            f"--state-dir={tmp_path / 'x'}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert result.returncode == 1
    assert f"supervisor PID {gone.pid} is not running" in result.stderr
    assert nothing.returncode == 1
    assert "no native stack is running" in nothing.stderr
    assert "just up native" in nothing.stderr
