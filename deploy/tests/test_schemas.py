"""Every rendered object validates against its schema, strictly.

Core objects: the OpenAPI schemas of two supported Kubernetes releases, the
oldest and the newest the ``kubernetes-validate`` package carries that are
still supported, in their strict form (an unknown field is an error, as
``kubectl apply``'s server-side field validation makes it).

KEDA and Prometheus operator objects: the validators the
``@kubernetes-models`` npm packages generate from those projects' CRDs,
pinned by deploy/tests/crd_validation/package-lock.json and installed by
scripts/install-crd-validators.sh (``just test`` runs it). They check types,
required fields and enums but, like a CRD's structural schema, not unknown
fields; for those the same packages' TypeScript types (generated from the
same CRDs) go through ``tsc``: an object literal with a field its type lacks
is a compile error, as ``kubectl apply``'s strict field validation refuses it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from deploy_support import REPO_ROOT, Rendered, group_of

KUBERNETES_RELEASES = ("1.35", "1.37")
"""The oldest and the newest supported release (December 2026)."""
CRD_VALIDATION = Path(__file__).parent / "crd_validation"
CRD_GROUPS = frozenset({"keda.sh", "monitoring.coreos.com"})
CRD_MODELS = {
    "keda.sh/v1alpha1": "@kubernetes-models/keda/keda.sh/v1alpha1",
    "monitoring.coreos.com/v1": (
        "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"
    ),
}
"""Where the npm packages keep each API version's types (validate.mjs too)."""


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


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (CRD_VALIDATION / "node_modules").is_dir():
        raise RuntimeError(
            "the CRD validators are not installed: run "
            "`bash scripts/install-crd-validators.sh` (just test does)"
        )
    return node


def _crd_verdicts(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = subprocess.run(
        [_node(), str(CRD_VALIDATION / "validate.mjs")],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        cwd=CRD_VALIDATION,
        timeout=120,
        check=True,
    )
    verdicts: list[dict[str, Any]] = json.loads(result.stdout)
    return verdicts


def _unknown_fields(objects: list[dict[str, Any]]) -> str:
    """``tsc``'s complaints about the objects as literals of their CRD types
    (empty when every field is known)."""
    lines = []
    for n, obj in enumerate(objects):
        module = f"{CRD_MODELS[obj['apiVersion']]}/{obj['kind']}"
        lines.append(f'import type {{ I{obj["kind"]} as T{n} }} from "{module}";')
        lines.append(f"export const o{n}: T{n} = {json.dumps(obj)};")
    # Inside the folder, so the packages resolve; a fresh name per run.
    source = CRD_VALIDATION / f"check-{uuid.uuid4().hex}.ts"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        result = subprocess.run(
            [
                _node(),
                str(CRD_VALIDATION / "node_modules" / "typescript" / "bin" / "tsc"),
                "--noEmit",
                "--strict",
                "--skipLibCheck",
                "--module",
                "nodenext",
                "--moduleResolution",
                "nodenext",
                "--target",
                "es2022",
                source.name,
            ],
            capture_output=True,
            text=True,
            cwd=CRD_VALIDATION,
            timeout=120,
            check=False,
        )
    finally:
        source.unlink()
    return result.stdout + result.stderr


def test_every_keda_and_prometheus_operator_object_validates(
    rendered: dict[str, Rendered],
) -> None:
    objects = _distinct(rendered, crd=True)
    kinds = {obj["kind"] for obj in objects}
    assert {"ScaledObject", "TriggerAuthentication", "PodMonitor"} <= kinds

    verdicts = _crd_verdicts(objects)

    failures = [v for v in verdicts if v["errors"]]
    assert not failures, failures
    assert _unknown_fields(objects) == ""


def test_an_unknown_field_in_a_custom_resource_is_caught() -> None:
    scaled = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "x"},
        "spec": {
            "scaleTargetRef": {"name": "w"},
            "triggers": [{"type": "postgresql", "metadata": {}}],
            "minReplicas": 1,
        },
    }
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "x"},
        "spec": {"selector": {}, "podMetricsEndpoints": [{"pathh": "/metrics"}]},
    }

    complaints = _unknown_fields([scaled, monitor])

    assert "'\"minReplicas\"' does not exist" in complaints
    assert "'\"pathh\"' does not exist" in complaints


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
    for name, version, licence in (
        ("@kubernetes-models/keda", "2.0.0", "MIT"),
        ("@kubernetes-models/prometheus-operator", "6.0.0", "MIT"),
        ("typescript", "5.9.3", "Apache-2.0"),
    ):
        entry = packages[f"node_modules/{name}"]
        assert entry["version"] == version
        assert entry["license"] == licence
        assert entry["integrity"].startswith("sha512-")
    assert (REPO_ROOT / "scripts" / "install-crd-validators.sh").is_file()
