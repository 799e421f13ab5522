"""``lgos-model-sync`` against a real LGOS server and bad catalogs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SyncCli
from lgos_testkit import free_port
from model_sync_support import (
    KEY_ENV,
    LGOS_KEY,
    CatalogServer,
    LgosServer,
    deployment_spec,
)

ORIGINAL = """\
model_list:
  - model_name: hand/one  # mine
    litellm_params: {model: openai/x}
general_settings: {}
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "litellm.yaml"
    path.write_text(ORIGINAL)
    return path


def owned(path: Path) -> dict[str, dict[str, Any]]:
    entries = yaml.safe_load(path.read_text())["model_list"]
    return {
        entry["model_name"]: entry
        for entry in entries
        if "lgos_sync" in entry.get("model_info", {})
    }


def assert_untouched(path: Path) -> None:
    assert path.read_text() == ORIGINAL
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def catalog_answers(models: dict[str, Any]) -> dict[str, tuple[int, bytes]]:
    """What an LGOS-like server answers for ``models`` (id -> lgos)."""
    listing = {
        "object": "list",
        "data": [
            {"id": i, "object": "model", "lgos": lgos} for i, lgos in models.items()
        ],
    }
    answers = {"/v1/models": (200, json.dumps(listing).encode())}
    for model_id, lgos in models.items():
        detail = {"id": model_id, "object": "model", "lgos": lgos}
        answers[f"/v1/models/{model_id}"] = (200, json.dumps(detail).encode())
    return answers


LGOS = {"description": "d", "features": [], "server_tools": [], "client_tools": []}


def test_sync_writes_one_entry_per_graph_with_the_served_lgos_details(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    outcome = sync_cli(
        "--config", str(config), "--deployment", deployment_spec(lgos_server.base_url)
    )

    assert outcome.code == 0, outcome.err
    assert "wrote" in outcome.out
    entries = owned(config)
    ids = lgos_server.model_ids()
    assert sorted(entries) == sorted(f"lgos/{model_id}" for model_id in ids)
    for model_id in ids:
        entry = entries[f"lgos/{model_id}"]
        assert (
            entry["model_info"]["lgos"]
            == lgos_server.get(f"/models/{model_id}")["lgos"]
        )
        assert entry["litellm_params"] == {
            "model": f"openai/{model_id}",
            "api_base": lgos_server.base_url,
            "api_key": f"os.environ/{KEY_ENV}",
        }
    assert config.read_text().startswith(ORIGINAL.split("general_settings")[0])


def test_a_second_run_changes_nothing(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    args = (
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
    )
    assert sync_cli(*args).code == 0
    before = config.stat()
    text = config.read_text()

    outcome = sync_cli(*args)

    assert outcome.code == 0
    assert "up to date" in outcome.out
    assert config.read_text() == text
    assert config.stat().st_mtime_ns == before.st_mtime_ns


def test_dry_run_prints_the_diff_and_writes_nothing(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
        "--dry-run",
    )

    assert outcome.code == 0
    assert "+  - model_name: lgos/echo\n" in outcome.out
    assert "would change: added lgos/echo" in outcome.out
    assert_untouched(config)


def test_check_fails_while_out_of_date_and_passes_after_a_sync(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    args = (
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
    )

    stale = sync_cli(*args, "--check")
    assert stale.code == 1
    assert "out of date" in stale.err
    assert_untouched(config)

    assert sync_cli(*args).code == 0
    assert sync_cli(*args, "--check").code == 0


def test_a_missing_configuration_file_is_created(
    sync_cli: SyncCli, lgos_server: LgosServer, tmp_path: Path
) -> None:
    path = tmp_path / "new.yaml"

    outcome = sync_cli(
        "--config", str(path), "--deployment", deployment_spec(lgos_server.base_url)
    )

    assert outcome.code == 0, outcome.err
    assert "lgos/echo" in owned(path)


def test_deployments_and_config_can_come_from_the_environment(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    environ = {
        KEY_ENV: LGOS_KEY,
        "LGOS_MODEL_SYNC_CONFIG": str(config),
        "LGOS_MODEL_SYNC_DEPLOYMENTS": deployment_spec(
            lgos_server.base_url, prefix="env"
        ),
        "LGOS_MODEL_SYNC_OWNER": "env-sync",
    }

    outcome = sync_cli(environ=environ)

    assert outcome.code == 0, outcome.err
    entries = owned(config)
    assert "env/echo" in entries
    assert entries["env/echo"]["model_info"]["lgos_sync"]["owner"] == "env-sync"


def test_an_unreachable_deployment_fails_and_leaves_the_file_as_it_was(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}/v1"

    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
        "--deployment",
        deployment_spec(dead, name="gone", prefix="gone"),
    )

    assert outcome.code == 2
    assert f"deployment 'gone' ({dead}): GET {dead}/models failed" in outcome.err
    assert "the configuration was not changed" in outcome.err
    assert_untouched(config)


def test_a_wrong_api_key_is_reported_for_its_deployment(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
        environ={KEY_ENV: "wrong"},
    )

    assert outcome.code == 2
    assert "deployment 'main'" in outcome.err
    assert "refused (HTTP 401)" in outcome.err
    assert_untouched(config)


def test_an_unset_key_variable_is_a_usage_error(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
        environ={},
    )

    assert outcome.code == 2
    assert f"environment variable {KEY_ENV}" in outcome.err
    assert_untouched(config)


def test_a_base_url_without_v1_gets_a_hint(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    root = lgos_server.base_url.removesuffix("/v1")

    outcome = sync_cli("--config", str(config), "--deployment", deployment_spec(root))

    assert outcome.code == 2
    assert "ending in /v1" in outcome.err
    assert_untouched(config)


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        ({"/v1/models": (200, b"<html>")}, "GET .*/v1/models did not answer JSON"),
        ({"/v1/models": (200, b'{"object": "list"}')}, "malformed model list: data"),
        (
            {
                **catalog_answers({"echo": LGOS}),
                "/v1/models/echo": (200, b'{"id": "echo", "object": "model"}'),
            },
            "malformed model 'echo': lgos",
        ),
        (
            {**catalog_answers({"echo": LGOS}), "/v1/models/echo": (500, b"{}")},
            "GET .*/v1/models/echo answered HTTP 500",
        ),
        (
            catalog_answers({"echo": {**LGOS, "features": "all"}}),
            "malformed model 'echo': lgos.features",
        ),
        (
            {
                **catalog_answers({"echo": LGOS}),
                "/v1/models/echo": (
                    200,
                    json.dumps(
                        {"id": "other", "object": "model", "lgos": LGOS}
                    ).encode(),
                ),
            },
            "answered model 'other'",
        ),
        (
            {
                "/v1/models": (
                    200,
                    json.dumps(
                        {"object": "list", "data": [{"id": "a"}, {"id": "a"}]}
                    ).encode(),
                )
            },
            r"repeats \['a'\]",
        ),
        (
            catalog_answers(
                {"echo": {**LGOS, "description": "os.environ/LITELLM_MASTER_KEY"}}
            ),
            "model 'echo': lgos.description starts with 'os.environ/'",
        ),
    ],
)
def test_a_malformed_catalog_fails_naming_the_deployment(
    sync_cli: SyncCli,
    catalog: CatalogServer,
    config: Path,
    answers: dict[str, tuple[int, bytes]],
    message: str,
) -> None:
    catalog.serve(answers)

    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(catalog.base_url, name="odd"),
    )

    assert outcome.code == 2
    assert f"deployment 'odd' ({catalog.base_url}):" in outcome.err
    assert re.search(message, outcome.err), outcome.err
    assert_untouched(config)


@pytest.mark.parametrize("model_id", ["a/b", "..", "with space", ""])
def test_a_model_id_that_is_not_one_path_segment_is_refused(
    sync_cli: SyncCli, catalog: CatalogServer, config: Path, model_id: str
) -> None:
    catalog.serve(catalog_answers({model_id: LGOS}))

    outcome = sync_cli(
        "--config",
        str(config),
        "--deployment",
        deployment_spec(catalog.base_url, name="odd"),
    )

    assert outcome.code == 2
    assert (
        f"deployment 'odd' ({catalog.base_url}): model id {model_id!r} is not one "
        "URL path segment" in outcome.err
    )
    assert_untouched(config)


def test_an_unowned_entry_with_a_synced_name_is_a_conflict(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    config.write_text(ORIGINAL.replace("hand/one", "lgos/echo"))

    outcome = sync_cli(
        "--config", str(config), "--deployment", deployment_spec(lgos_server.base_url)
    )

    assert outcome.code == 2
    assert "['lgos/echo'] are already defined" in outcome.err
    assert config.read_text() == ORIGINAL.replace("hand/one", "lgos/echo")


def test_a_failed_write_leaves_the_file_and_no_temporary_behind(
    sync_cli: SyncCli,
    lgos_server: LgosServer,
    config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", failing_fsync)

    outcome = sync_cli(
        "--config", str(config), "--deployment", deployment_spec(lgos_server.base_url)
    )

    assert outcome.code == 2
    assert "No space left on device" in outcome.err
    assert_untouched(config)


def test_a_rewrite_keeps_the_file_mode(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path
) -> None:
    config.chmod(0o600)

    assert (
        sync_cli(
            "--config",
            str(config),
            "--deployment",
            deployment_spec(lgos_server.base_url),
        ).code
        == 0
    )

    assert config.stat().st_mode & 0o777 == 0o600


def test_a_symlinked_configuration_is_updated_through_the_link(
    sync_cli: SyncCli, lgos_server: LgosServer, config: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link.yaml"
    link.symlink_to(config)

    assert (
        sync_cli(
            "--config", str(link), "--deployment", deployment_spec(lgos_server.base_url)
        ).code
        == 0
    )

    assert link.is_symlink()
    assert "lgos/echo" in owned(config)
