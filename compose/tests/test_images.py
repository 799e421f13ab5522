"""The Dockerfile's builder step, run here without an engine.

For each workspace image compose builds, the workspace is copied the way the
build context is (``Dockerfile.dockerignore`` applied) and the builder
stage's exact ``uv sync`` command installs the member into a fresh
virtualenv, offline from uv's cache. Then every command compose runs in that
image must exist there and start (``--help``, or its own usage error), and
the healthcheck script must work with that virtualenv's Python. This runs
the local Python 3.11 instead of the image's; the image build itself needs
an engine.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from compose_support import COMPOSE_DIR, REPO_ROOT, Member, normalize
from lgos_testkit import STARTUP_SECONDS

DOCKERFILE = COMPOSE_DIR / "Dockerfile"
DOCKERIGNORE = COMPOSE_DIR / "Dockerfile.dockerignore"
SYNC = re.compile(r"^\s*(uv sync [^\n\\]*)$", re.MULTILINE)


def _ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _copy_context(destination: Path) -> None:
    """The repository as the build context sees it."""
    patterns = _ignore_patterns()

    def ignored(folder: str, names: list[str]) -> set[str]:
        relative = Path(folder).relative_to(REPO_ROOT)
        skipped = set()
        for name in names:
            path = (relative / name).as_posix()
            for pattern in patterns:
                anywhere = pattern.removeprefix("**/")
                if fnmatch.fnmatch(path, pattern) or (
                    pattern.startswith("**/") and fnmatch.fnmatch(name, anywhere)
                ):
                    skipped.add(name)
        return skipped

    shutil.copytree(REPO_ROOT, destination, ignore=ignored, symlinks=True)


def _builder_command(package: str) -> list[str]:
    """The builder stage's ``uv sync`` line, with PACKAGE filled in."""
    match = SYNC.search(DOCKERFILE.read_text(encoding="utf-8"))
    assert match is not None, "compose/Dockerfile has no `uv sync` line"
    line = match.group(1).replace('"${PACKAGE}"', package)
    return line.split()


@pytest.fixture(scope="module")
def context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    destination = tmp_path_factory.mktemp("context") / "src"
    _copy_context(destination)
    return destination


@pytest.fixture(scope="module")
def image_venvs(
    context: Path, services: dict[str, dict[str, Any]], members: dict[str, Member]
) -> dict[str, Path]:
    """member -> the virtualenv its image would hold."""
    built = sorted(
        {
            normalize(service["build"]["args"]["PACKAGE"])
            for service in services.values()
            if "build" in service
        }
    )
    venvs: dict[str, Path] = {}
    for member in built:
        if member not in members:
            continue  # a member another branch adds (see test_structure)
        venv = context.parent / f"venv-{member}"
        command = _builder_command(member)
        assert command[0] == "uv"
        uv = os.environ.get("UV") or shutil.which("uv")
        assert uv is not None, "uv is not on PATH"
        env = {
            **os.environ,
            "UV_PROJECT_ENVIRONMENT": str(venv),
            "UV_PYTHON_DOWNLOADS": "never",
            "UV_OFFLINE": "1",
        }
        env.pop("VIRTUAL_ENV", None)
        result = subprocess.run(
            [uv, *command[1:]],
            cwd=context,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert result.returncode == 0, f"{member}:\n{result.stderr}"
        venvs[member] = venv
    return venvs


def _run(venv: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(venv)}
    return subprocess.run(
        list(argv),
        env=env,
        capture_output=True,
        text=True,
        # A bound, not a speed check: importing a member on a busy machine.
        timeout=STARTUP_SECONDS,
        check=False,
    )


def test_every_command_compose_runs_starts_in_its_image(
    image_venvs: dict[str, Path], services: dict[str, dict[str, Any]]
) -> None:
    started = {}
    for name, service in services.items():
        if "build" not in service:
            continue
        member = normalize(service["build"]["args"]["PACKAGE"])
        if member not in image_venvs:
            continue
        venv = image_venvs[member]
        command = list(service["command"])
        script = venv / "bin" / command[0]
        assert script.is_file(), f"{name}: {command[0]} is not in the {member} image"
        if command[0] == "lgos-demo-setup":
            # No flags: without a database it says what to set.
            result = _run(venv, str(script))
            assert "set DEMO_DATABASE_URL" in result.stderr, result.stderr
        else:
            head = command[:2] if command[0] == "lgos" else command[:1]
            result = _run(venv, str(venv / "bin" / head[0]), *head[1:], "--help")
            assert result.returncode == 0, f"{name}: {result.stderr}"
            assert "usage:" in result.stdout.lower()
        started[name] = member

    assert {"demo-api", "worker", "files-api", "model-sync", "chainlit"} <= set(started)


def test_images_carry_only_their_members_dependencies(
    image_venvs: dict[str, Path],
) -> None:
    def has(member: str, module: str) -> bool:
        venv = image_venvs[member]
        code = f"import importlib.util as u; print(u.find_spec({module!r}) is None)"
        found = _run(venv, str(venv / "bin" / "python"), "-c", code)
        assert found.returncode == 0, found.stderr
        return found.stdout.strip() == "False"

    assert has("lgos-demos", "langgraph")
    assert has("lgos-demos", "psycopg")  # the worker's healthcheck needs it
    assert not has("lgos-files-api", "langgraph")
    assert not has("lgos-chainlit", "langgraph")
    assert not has("lgos-model-sync", "chainlit")


def test_the_healthcheck_script_runs_on_the_image_python(
    image_venvs: dict[str, Path],
) -> None:
    venv = image_venvs["lgos-demos"]
    python = str(venv / "bin" / "python")
    script = str(COMPOSE_DIR / "healthcheck.py")

    http = _run(venv, python, script, "http://127.0.0.1:1/health")
    database = subprocess.run(
        [python, script, "env:DB"],
        env={"DB": "postgresql://lgos@127.0.0.1:1/lgos"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert http.returncode == 1
    assert "unreachable" in http.stderr
    assert database.returncode == 1
    assert "the database in DB does not answer" in database.stderr


def test_the_build_context_leaves_out_local_state_and_secrets(context: Path) -> None:
    left_out = [".venv", ".tools", ".git", ".state", "compose/.env"]

    assert [path for path in left_out if (context / path).exists()] == []
    assert (context / "uv.lock").is_file()
    assert (context / "demos" / "src" / "lgos_demos" / "search" / "corpus").is_dir()
    assert (REPO_ROOT / ".venv").is_dir(), "nothing to leave out: run `uv sync`"
