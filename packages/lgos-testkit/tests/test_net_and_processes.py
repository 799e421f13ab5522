"""Ports, polling and the running-process helper, on real processes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lgos_testkit import (
    ThreadServer,
    free_ports,
    pid_alive,
    running,
    start_process,
    wait_until,
)
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

PY = sys.executable


def test_free_ports_are_distinct_and_bindable():
    ports = free_ports(5)

    assert len(set(ports)) == 5
    assert all(1024 <= port < 65536 for port in ports)


def test_asking_for_no_port_is_a_clear_error():
    with pytest.raises(ValueError, match="at least 1"):
        free_ports(0)


def test_wait_until_names_what_never_happened():
    with pytest.raises(TimeoutError, match="the moon"):
        wait_until(lambda: False, 0.2, "the moon")


def test_a_health_checked_process_is_stopped_by_pid_and_keeps_its_log(
    tmp_path: Path,
):
    port = free_ports(1)[0]
    command = [PY, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    log = tmp_path / "server.log"

    with running(
        command,
        log=log,
        name="http.server",
        cwd=tmp_path,
        health_url=f"http://127.0.0.1:{port}/",
        timeout=20,
    ) as server:
        pid = server.pid
        assert pid_alive(pid)

    assert server.exited()
    assert not pid_alive(pid)
    assert '"GET / HTTP/1.1" 200' in log.read_text()


def test_a_process_that_dies_before_health_fails_with_its_log(tmp_path: Path):
    command = [PY, "-c", "import sys; print('no config here'); sys.exit(3)"]

    with (
        pytest.raises(RuntimeError, match=r"(?s)exited \(code 3\).*no config here"),
        running(
            command,
            log=tmp_path / "dies.log",
            name="dies",
            health_url=f"http://127.0.0.1:{free_ports(1)[0]}/",
        ),
    ):
        pytest.fail("the block must not run")


def test_a_process_ignoring_sigterm_is_killed(tmp_path: Path):
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    stubborn += "print('ready', flush=True)\nwhile True: time.sleep(1)"
    log = tmp_path / "stubborn.log"
    process = start_process([PY, "-c", stubborn], log=log, name="stubborn")
    wait_until(lambda: "ready" in log.read_text(), 20, "the stubborn process")

    process.stop(timeout=0.5)

    assert process.process.returncode == -9


def test_thread_server_serves_an_app_until_the_block_ends():
    import httpx

    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("hello"))])

    with ThreadServer(app) as server:
        assert httpx.get(server.url).text == "hello"

    with pytest.raises(httpx.TransportError):
        httpx.get(server.url, timeout=2)
