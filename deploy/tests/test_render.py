"""Every kustomization renders with the pinned kubectl, and what it renders
hangs together: every name a manifest refers to exists."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from deploy_support import (
    KUBERNETES_DIR,
    REPO_ROOT,
    TRY_OUT,
    Rendered,
    copy_trees,
    kustomizations,
    references,
    render,
)


def test_the_base_and_every_overlay_render(rendered: dict[str, Rendered]) -> None:
    assert {"base", "overlays/try-out", "overlays/production"} <= set(rendered)
    assert set(rendered) == {
        folder.relative_to(KUBERNETES_DIR).as_posix() for folder in kustomizations()
    }
    for result in rendered.values():
        assert result.of_kind("Deployment"), result.name


def test_the_try_out_without_its_generated_secrets_fails_naming_the_file(
    tmp_path: Path,
) -> None:
    # The repository holds no secret: rendering it as committed must fail
    # on an env file make_secrets.py writes, not produce empty Secrets.
    root = copy_trees(tmp_path)
    with pytest.raises(AssertionError, match=r"secrets/database\.env"):
        render(root / TRY_OUT.relative_to(KUBERNETES_DIR))


def test_no_secret_value_is_committed(rendered: dict[str, Rendered]) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "deploy"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert not [path for path in tracked if "/secrets/" in path]
    # Only the try-out generates Secrets; the others expect them from outside.
    for result in rendered.values():
        if result.name != "overlays/try-out":
            assert not result.of_kind("Secret"), result.name


def test_every_config_map_and_secret_named_in_the_try_out_exists(
    try_out: Rendered,
) -> None:
    present = {(o["kind"], o["metadata"]["name"]) for o in try_out.objects}
    named = set().union(*(references(obj) for obj in try_out.objects))

    assert named
    assert named - present == set()


def _pod_labels(result: Rendered) -> list[dict[str, str]]:
    return [w["spec"]["template"]["metadata"]["labels"] for w in result.workloads()]


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_every_service_pdb_and_autoscaler_targets_something_it_renders(
    rendered: dict[str, Rendered],
) -> None:
    for result in rendered.values():
        pods = _pod_labels(result)
        for service in result.of_kind("Service"):
            selector = service["spec"]["selector"]
            assert any(_selects(selector, labels) for labels in pods), service
        for budget in result.of_kind("PodDisruptionBudget"):
            selector = budget["spec"]["selector"]["matchLabels"]
            assert any(_selects(selector, labels) for labels in pods), budget
        for scaler in result.of_kind("HorizontalPodAutoscaler"):
            target = scaler["spec"]["scaleTargetRef"]
            result.get(target["kind"], target["name"])
        for scaled in result.of_kind("ScaledObject"):
            result.get("Deployment", scaled["spec"]["scaleTargetRef"]["name"])
            for trigger in scaled["spec"]["triggers"]:
                result.get(
                    "TriggerAuthentication", trigger["authenticationRef"]["name"]
                )
