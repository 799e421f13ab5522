"""The try-out overlay's secret generator: fresh values, consistent across
files, never replaced behind PostgreSQL's back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from deploy_support import TRY_OUT

SCRIPT = TRY_OUT / "make_secrets.py"


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--dir", str(folder), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _read(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines())
    return dict(pairs)


def test_secrets_are_random_private_and_agree_with_each_other(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert _run(first).returncode == 0
    assert _run(second).returncode == 0

    database = _read(first / "database.env")
    postgres = _read(first / "postgres.env")
    s3 = _read(first / "files-s3.env")
    minio = _read(first / "minio.env")
    api = _read(first / "api.env")
    assert f":{postgres['password']}@" in database["url"]
    assert s3["secret-key"] == minio["root-password"]
    assert api["client-key"] in api["api-keys"]
    files = _read(first / "files.env")
    assert files["client-key"] in files["api-keys"]
    assert files["service-key"] in files["service-keys"]
    # Batches: the Files API owner of the client key is the API key's tenant.
    principals = json.loads(api["api-keys"])
    owners = json.loads(files["api-keys"])
    assert owners[files["client-key"]] == principals[api["client-key"]]
    assert _read(first / "litellm.env")["master-key"].startswith("sk-")
    assert postgres["password"] != _read(second / "postgres.env")["password"]
    assert {oct(p.stat().st_mode & 0o777) for p in first.iterdir()} == {"0o600"}


def test_running_again_keeps_the_secrets_postgres_was_started_with(
    tmp_path: Path,
) -> None:
    _run(tmp_path)
    before = _read(tmp_path / "postgres.env")

    again = _run(tmp_path)

    assert again.returncode == 0
    assert "has them already" in again.stdout
    assert _read(tmp_path / "postgres.env") == before


def test_a_partial_set_is_refused_rather_than_completed(tmp_path: Path) -> None:
    _run(tmp_path)
    (tmp_path / "minio.env").unlink()
    before = _read(tmp_path / "files-s3.env")

    result = _run(tmp_path)

    assert result.returncode != 0
    assert "--force" in result.stderr
    assert _read(tmp_path / "files-s3.env") == before
