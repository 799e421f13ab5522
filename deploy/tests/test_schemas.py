"""Every rendered object validates against its schema, strictly.

Core objects: the OpenAPI schemas of two supported Kubernetes releases, the
oldest and the newest the ``kubernetes-validate`` package carries that are
still supported, in their strict form (an unknown field is an error, as
``kubectl apply``'s server-side field validation makes it).

KEDA and Prometheus operator objects: the validators the
``@kubernetes-models`` npm packages generate from those projects' CRDs,
pinned by deploy/tests/crd_validation/package-lock.json and installed by
scripts/install-crd-validators.sh (``just test`` runs it). They check types,
required fields and enums; like a CRD's own structural schema they ignore
unknown fields, so a misspelt optional field is not caught there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from deploy_support import REPO_ROOT, Rendered, group_of

KUBERNETES_RELEASES = ("1.35", "1.37")
"""The oldest and the newest supported release (December 2026)."""
CRD_VALIDATION = Path(__file__).parent / "crd_validation"
CRD_GROUPS = frozenset({"keda.sh", "monitoring.coreos.com"})


def _distinct(rendered: dict[str, Rendered], crd: bool) -> list[dict[str, Any]]:
    """Each object once, across all renders (most repeat across overlays)."""
    seen: dict[str, dict[str, Any]] = {}
    for result in rendered.values():
        for obj in result.objects:
            if (group_of(obj) in CRD_GROUPS) == crd:
                seen.setdefault(json.dumps(obj, sort_keys=True), obj)
    return list(seen.values())


@pytest.mark.parametrize("release", KUBERNETES_RELEASES)
def test_every_core_object_validates_strictly(
    rendered: dict[str, Rendered], release: str
) -> None:
    failures = []
    for obj in _distinct(rendered, crd=False):
        try:
            kubernetes_validate.validate(obj, release, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(part) for part in exc.path)
            failures.append(f"{obj['kind']}/{obj['metadata']['name']}: {path}: {exc}")
        except kubernetes_validate.SchemaNotFoundError as exc:
            failures.append(exc.message)
    assert not failures, "\n".join(failures)


def test_a_misspelt_field_fails_the_strict_validation() -> None:
    # The check above is only worth something if it refuses an unknown field.
    budget = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "x"},
        "spec": {"maxUnavailabel": 1, "selector": {"matchLabels": {"a": "b"}}},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(budget, KUBERNETES_RELEASES[0], strict=True)


def _crd_verdicts(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None or not (CRD_VALIDATION / "node_modules").is_dir():
        raise RuntimeError(
            "the CRD validators are not installed: run "
            "`bash scripts/install-crd-validators.sh` (just test does)"
        )
    result = subprocess.run(
        [node, str(CRD_VALIDATION / "validate.mjs")],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        cwd=CRD_VALIDATION,
        timeout=120,
        check=True,
    )
    verdicts: list[dict[str, Any]] = json.loads(result.stdout)
    return verdicts


def test_every_keda_and_prometheus_operator_object_validates(
    rendered: dict[str, Rendered],
) -> None:
    objects = _distinct(rendered, crd=True)
    kinds = {obj["kind"] for obj in objects}
    assert {"ScaledObject", "TriggerAuthentication", "PodMonitor"} <= kinds

    verdicts = _crd_verdicts(objects)

    failures = [v for v in verdicts if v["errors"]]
    assert not failures, failures


def test_the_crd_validators_refuse_a_wrong_type() -> None:
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "x"},
        "spec": {"scaleTargetRef": {"name": "w"}, "minReplicaCount": "one"},
    }
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "x"},
        "spec": {"selector": {}, "podMetricsEndpoints": [{"interval": 30}]},
    }
    verdicts = _crd_verdicts([scaled, monitor])

    assert "minReplicaCount" in verdicts[0]["errors"][0]
    assert "interval" in verdicts[1]["errors"][0]


def test_the_crd_validators_are_pinned_with_their_licences() -> None:
    lock = json.loads((CRD_VALIDATION / "package-lock.json").read_text())
    packages = lock["packages"]
    for name, version in (
        ("@kubernetes-models/keda", "2.0.0"),
        ("@kubernetes-models/prometheus-operator", "6.0.0"),
    ):
        entry = packages[f"node_modules/{name}"]
        assert entry["version"] == version
        assert entry["license"] == "MIT"
        assert entry["integrity"].startswith("sha512-")
    assert (REPO_ROOT / "scripts" / "install-crd-validators.sh").is_file()
