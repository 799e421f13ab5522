"""``lgos serve`` as a subprocess: registry from the environment, JSON logs,
graceful shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest
from conftest import TESTS_DIR
from langgraph_openai_serve import cli
from lgos_testkit import STARTUP_SECONDS, free_port, wait_until


def _serve(tmp_path, *args: str, **env: str) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "langgraph_openai_serve.cli",
            "serve",
            "--port",
            str(port),
            *args,
        ],
        env={
            **os.environ,
            "PYTHONPATH": str(TESTS_DIR),
            "LGOS_TEST_MARKER_DIR": str(tmp_path),
            **env,
        },
        stderr=subprocess.PIPE,
        text=True,
    )

    def answering() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"lgos serve exited: {process.stderr.read()}")
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1)
        except httpx.TransportError:
            return False
        return True

    try:
        wait_until(answering, STARTUP_SECONDS, "lgos serve to answer")
    except TimeoutError:
        process.kill()
        process.communicate()
        raise
    return process, port


def _stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.terminate()
    try:
        _, stderr = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        _, stderr = process.communicate()
    return stderr


def test_serve_loads_the_registry_named_by_the_environment_and_logs_json(tmp_path):
    process, port = _serve(tmp_path, LGOS_REGISTRY="live_app:registry")
    try:
        models = httpx.get(f"http://127.0.0.1:{port}/v1/models").json()
        reply = httpx.post(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json={"model": "words", "messages": [{"role": "user", "content": "x"}]},
            headers={"X-Request-ID": "cli-test-1"},
        )
    finally:
        stderr = _stop(process)

    assert [m["id"] for m in models["data"]] == ["words", "paced", "silent", "hang"]
    assert reply.json()["choices"][0]["message"]["content"] == "one two three four five"
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    access = [
        line for line in lines if line["logger"] == "langgraph_openai_serve.access"
    ]
    chat = next(line for line in access if line["request_id"] == "cli-test-1")
    assert chat["model"] == "words"
    assert chat["status"] == 200
    assert chat["path"] == "/chat/completions"
    assert isinstance(chat["duration_ms"], float)


def test_flags_override_the_environment(tmp_path):
    process, port = _serve(
        tmp_path,
        "--registry",
        "live_app:registry",
        "--prefix",
        "/api",
        LGOS_REGISTRY="nope:x",
    )
    try:
        status = httpx.get(f"http://127.0.0.1:{port}/api/models").status_code
    finally:
        _stop(process)

    assert status == 200


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Set LGOS_REGISTRY"),
        ("no_such_module:registry", "Cannot import"),
        ("live_app:missing", "has no attribute"),
        ("live_app:create_app", "not a GraphRegistry"),
    ],
)
def test_a_bad_registry_fails_before_binding_the_port(
    monkeypatch, capsys, tmp_path, spec, message
):
    monkeypatch.syspath_prepend(str(TESTS_DIR))
    monkeypatch.setenv("LGOS_TEST_MARKER_DIR", str(tmp_path))
    monkeypatch.setenv("LGOS_REGISTRY", spec)

    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--port", "9"])

    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_shutdown_lets_an_in_flight_stream_finish(tmp_path):
    process, port = _serve(tmp_path, LGOS_REGISTRY="live_app:registry")
    lines: list[str] = []

    def stream() -> None:
        with httpx.stream(
            "POST",
            f"http://127.0.0.1:{port}/v1/chat/completions",
            json={
                "model": "silent",
                "stream": True,
                "messages": [{"role": "user", "content": "x"}],
            },
            timeout=10,
        ) as response:
            lines.extend(line for line in response.iter_lines() if line)

    reader = threading.Thread(target=stream)
    reader.start()
    wait_until((tmp_path / "x.started").exists, 30, "the graph to start")
    process.send_signal(signal.SIGTERM)
    # Signalled mid-run; the server goes on serving it until it ends.
    (tmp_path / "x.release").touch()
    reader.join(timeout=30)
    _stop(process)

    assert any("done waiting" in line for line in lines)
    assert lines[-1] == "data: [DONE]"
    # uvicorn re-raises the signal once its graceful shutdown is done.
    assert process.returncode in (0, -signal.SIGTERM)


def test_an_unknown_response_store_fails_before_binding_the_port(monkeypatch, capsys):
    monkeypatch.setenv("LGOS_REGISTRY", "stored_app:registry")
    monkeypatch.setenv("LGOS_RESPONSE_STORE", "redis")

    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--port", "9"])

    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "RESPONSE_STORE" in error
    assert "'memory' or 'postgres'" in error
