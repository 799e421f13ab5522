"""The ``lgos-files-api`` console script and the package's public surface."""

from __future__ import annotations

import os
import subprocess
import sys

import lgos_files_api


def test_public_api_is_the_app_factory_and_settings() -> None:
    assert lgos_files_api.__all__ == ["Settings", "create_app"]


def test_console_script_refuses_to_start_without_api_keys() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LGOS_FILES_")}

    result = subprocess.run(
        [sys.executable, "-m", "lgos_files_api", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert result.returncode == 1
    assert "invalid configuration" in result.stderr
    assert "API_KEYS" in result.stderr


def test_console_script_describes_its_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lgos_files_api", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )

    for option in ("--host", "--port", "--log-level", "LGOS_FILES_"):
        assert option in result.stdout
