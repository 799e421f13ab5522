"""The compose file validates offline, and the check can fail.

``docker-compose config`` parses, interpolates and validates the file the
way ``docker compose up`` does before it starts anything; a file that fails
here would fail for the user at once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from compose_support import (
    COMPOSE_FILE,
    REPO_ROOT,
    placeholder_secrets,
    run_compose_config,
    secret_names,
)


def test_the_compose_file_validates_with_the_example_settings() -> None:
    result = run_compose_config()

    assert result.returncode == 0, result.stderr
    assert result.stdout == ""


BREAKAGES = {
    "a dependency on a service that does not exist": (
        "      db-setup:\n        condition: service_completed_successfully\n",
        "      db-setup:\n        condition: service_completed_successfully\n"
        "      no-such-service:\n        condition: service_healthy\n",
        "no-such-service",
    ),
    "a misspelt healthcheck key": (
        "  interval: 10s\n",
        "  intervall: 10s\n",
        "intervall",
    ),
    "a port that is not a number": (
        "127.0.0.1:${API_PORT:-8000}:8000",
        "127.0.0.1:${API_PORT:-8000}:eight-thousand",
        "eight-thousand",
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_a_broken_compose_file_fails_validation(breakage: str, tmp_path: Path) -> None:
    old, new, named = BREAKAGES[breakage]
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    assert old in text, f"the test's anchor {old!r} is gone from compose.yaml"
    broken = tmp_path / "compose" / "compose.yaml"
    broken.parent.mkdir()
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")

    result = run_compose_config(broken)

    assert result.returncode != 0
    assert named in result.stderr


@pytest.mark.parametrize("secret", secret_names())
def test_a_missing_secret_stops_compose_naming_it(secret: str) -> None:
    secrets = placeholder_secrets()
    del secrets[secret]

    result = run_compose_config(secrets=secrets)

    assert result.returncode != 0
    assert f"set {secret} in compose/.env" in result.stderr


def test_the_secrets_are_the_expected_ones() -> None:
    assert secret_names() == [
        "FILES_API_KEY",
        "FILES_SERVICE_KEY",
        "FILES_UI_KEY",
        "GRAFANA_ADMIN_PASSWORD",
        "LGOS_GATEWAY_KEY",
        "LITELLM_MASTER_KEY",
        "LITELLM_UI_KEY",
        "MINIO_ROOT_PASSWORD",
        "POSTGRES_PASSWORD",
        "WEBUI_SECRET_KEY",
    ]


def _just(*args: str) -> subprocess.CompletedProcess[str]:
    just = shutil.which("just")
    assert just is not None, "rust-just is not installed: run `uv sync`"
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    return subprocess.run(
        [just, *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_just_recipe_passes_our_file_and_fails_a_broken_one(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "compose.yaml"
    broken.write_text(
        "services:\n  api:\n    image: x:1\n    depends_on: [missing]\n",
        encoding="utf-8",
    )

    ours = _just("compose-check")
    theirs = _just("compose-check", str(broken))

    assert ours.returncode == 0, ours.stderr
    assert "compose/compose.yaml is valid" in ours.stdout
    assert theirs.returncode != 0
    assert "missing" in theirs.stderr
