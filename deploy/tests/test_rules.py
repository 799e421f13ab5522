"""The rules that make upgrades and scale-downs safe, read from the rendered
manifests themselves: grace periods from the containers' own settings,
probes, disruption budgets, resources, rolling updates, pod security."""

from __future__ import annotations

from typing import Any

import pytest
from deploy_support import (
    KUBERNETES_DIR,
    REPO_ROOT,
    Rendered,
    container,
    containers,
    plain_env,
    pod_spec,
    references,
)

MARGIN_SECONDS = 10
"""What a grace period keeps beyond the sum of its phases (a slow SIGTERM
handler, a busy node)."""


def _seconds(env: dict[str, str], name: str) -> float:
    assert name in env, f"{name} is not set in the manifest"
    return float(env[name])


def _all(rendered: dict[str, Rendered]) -> list[Rendered]:
    return list(rendered.values())


def test_an_api_pod_outlasts_its_drain_and_its_streams(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        api = result.get("Deployment", "lgos-api")
        box = container(api, "api")
        env = plain_env(result, box)
        drain = _seconds(env, "LGOS_DRAIN_DELAY")
        streams = _seconds(env, "LGOS_SHUTDOWN_TIMEOUT")
        pre_stop = box["lifecycle"]["preStop"]["sleep"]["seconds"]
        grace = pod_spec(api)["terminationGracePeriodSeconds"]

        # The preStop sleep lets Services forget the pod; the drain delay
        # then keeps it accepting, not ready; streams get their timeout.
        assert pre_stop == drain, result.name
        assert grace >= pre_stop + drain + streams + MARGIN_SECONDS, result.name


def test_a_worker_outlasts_its_shutdown_timeout(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        worker = result.get("Deployment", "lgos-worker")
        env = plain_env(result, container(worker, "worker"))
        shutdown = _seconds(env, "LGOS_WORKER_SHUTDOWN_TIMEOUT")
        grace = pod_spec(worker)["terminationGracePeriodSeconds"]

        assert grace >= shutdown + MARGIN_SECONDS, result.name


def _http_probe(box: dict[str, Any], kind: str) -> tuple[str, str]:
    probe = box[kind]["httpGet"]
    return probe["path"], probe["port"]


def _port_number(box: dict[str, Any], port: str | int) -> int:
    if isinstance(port, int):
        return port
    for declared in box["ports"]:
        if declared["name"] == port:
            number: int = declared["containerPort"]
            return number
    raise AssertionError(f"{box['name']} declares no port {port}")


@pytest.mark.parametrize(
    ("deployment", "name"), [("lgos-api", "api"), ("lgos-worker", "worker")]
)
def test_lgos_probes_are_distinct_and_on_the_health_routes(
    base: Rendered, deployment: str, name: str
) -> None:
    box = container(base.get("Deployment", deployment), name)
    startup = _http_probe(box, "startupProbe")
    ready = _http_probe(box, "readinessProbe")
    live = _http_probe(box, "livenessProbe")

    # Liveness never checks dependencies (a database outage must not
    # restart every pod); readiness does; startup waits for the process.
    assert ready[0] == "/health/ready"
    assert live[0] == "/health/live"
    assert startup[0] == "/health/live"
    assert ready != live
    assert box["startupProbe"] != box["livenessProbe"]
    # Readiness answers within its checks' 0.8 s whatever the database does:
    # the kubelet's 1 s default is enough, and a longer one only hides a hang.
    assert box["readinessProbe"]["timeoutSeconds"] == 1
    # Starting may take longer than a liveness failure allows.
    budget = (
        box["startupProbe"]["periodSeconds"] * box["startupProbe"]["failureThreshold"]
    )
    assert budget >= 30


def test_the_worker_probes_its_own_health_server(base: Rendered) -> None:
    worker = container(base.get("Deployment", "lgos-worker"), "worker")
    env = plain_env(base, worker)
    ports = {
        _port_number(worker, _http_probe(worker, kind)[1])
        for kind in (
            "startupProbe",
            "readinessProbe",
            "livenessProbe",
        )
    }

    assert ports == {int(env["LGOS_WORKER_HEALTH_PORT"])}
    # The kubelet connects from outside the pod's loopback.
    assert env["LGOS_WORKER_HEALTH_HOST"] == "0.0.0.0"


def test_the_api_probes_the_port_lgos_serve_binds(base: Rendered) -> None:
    api = container(base.get("Deployment", "lgos-api"), "api")
    env = plain_env(base, api)
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert _port_number(api, _http_probe(api, kind)[1]) == int(env["LGOS_PORT"])
    assert env["LGOS_HOST"] == "0.0.0.0"


def test_every_long_running_workload_has_a_disruption_budget(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        budgets = [
            b["spec"]["selector"]["matchLabels"]
            for b in result.of_kind("PodDisruptionBudget")
        ]
        for workload in result.workloads():
            if workload["kind"] == "Job":
                continue  # runs to completion; nothing to keep available
            labels = workload["spec"]["template"]["metadata"]["labels"]
            covering = [
                b for b in budgets if all(labels.get(k) == v for k, v in b.items())
            ]
            assert len(covering) == 1, (result.name, workload["metadata"]["name"])
        for budget in result.of_kind("PodDisruptionBudget"):
            # maxUnavailable: a one-pod workload never blocks a node drain.
            assert budget["spec"].get("maxUnavailable") == 1, budget


def test_every_container_has_requests_and_limits(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        for workload in result.workloads():
            for box in containers(workload):
                resources = box.get("resources", {})
                for bound in ("requests", "limits"):
                    assert set(resources.get(bound, {})) >= {"cpu", "memory"}, (
                        result.name,
                        workload["metadata"]["name"],
                        box["name"],
                        bound,
                    )


def test_every_rolling_update_starts_the_new_pod_before_stopping_an_old_one(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        for deployment in result.of_kind("Deployment"):
            strategy = deployment["spec"]["strategy"]
            assert strategy["type"] == "RollingUpdate"
            assert strategy["rollingUpdate"]["maxUnavailable"] == 0, deployment
            assert strategy["rollingUpdate"]["maxSurge"] >= 1


def test_the_api_keeps_two_replicas_and_its_autoscaler_owns_the_count(
    base: Rendered,
) -> None:
    api = base.get("Deployment", "lgos-api")
    autoscaler = base.get("HorizontalPodAutoscaler", "lgos-api")

    # With `replicas` in the manifest every `kubectl apply` would undo the
    # autoscaler's count.
    assert "replicas" not in api["spec"]
    assert autoscaler["spec"]["minReplicas"] >= 2
    assert autoscaler["spec"]["metrics"][0]["resource"]["name"] == "cpu"


def test_keda_scales_the_workers_by_their_own_concurrency(base: Rendered) -> None:
    worker = base.get("Deployment", "lgos-worker")
    scaled = base.get("ScaledObject", "lgos-worker")
    (trigger,) = scaled["spec"]["triggers"]
    concurrency = plain_env(base, container(worker, "worker"))[
        "LGOS_BACKGROUND_CONCURRENCY"
    ]

    assert "replicas" not in worker["spec"]
    assert scaled["spec"]["scaleTargetRef"]["name"] == "lgos-worker"
    assert trigger["type"] == "postgresql"
    assert float(trigger["metadata"]["targetQueryValue"]) == float(concurrency)
    assert scaled["spec"]["minReplicaCount"] >= 1


def test_every_pod_runs_as_non_root_on_a_read_only_root(
    rendered: dict[str, Rendered],
) -> None:
    for result in _all(rendered):
        for workload in result.workloads():
            pod = pod_spec(workload)["securityContext"]
            assert pod["runAsNonRoot"] is True
            assert pod["runAsUser"] != 0
            assert pod["seccompProfile"]["type"] == "RuntimeDefault"
            assert pod_spec(workload)["automountServiceAccountToken"] is False
            for box in containers(workload):
                own = box["securityContext"]
                assert own["allowPrivilegeEscalation"] is False
                assert own["readOnlyRootFilesystem"] is True
                assert own["capabilities"]["drop"] == ["ALL"]


def _compose_images() -> set[str]:
    import yaml

    compose = yaml.safe_load((REPO_ROOT / "compose" / "compose.yaml").read_text())
    return {
        service["image"]
        for service in compose["services"].values()
        if "image" in service
    }


def test_the_images_are_the_ones_compose_builds_and_pins(try_out: Rendered) -> None:
    images = {box["image"] for w in try_out.workloads() for box in containers(w)}

    assert images <= _compose_images()
    assert {"lgos/lgos-demos:local", "lgos/lgos-files-api:local"} <= images


@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("components/litellm/config.yaml", "compose/litellm/config.yaml"),
        (
            "components/litellm/lgos_gateway_auth.py",
            "packages/lgos-stack/src/lgos_stack/lgos_gateway_auth.py",
        ),
        (
            "components/litellm/lgos_gateway_errors.py",
            "packages/lgos-stack/src/lgos_stack/lgos_gateway_errors.py",
        ),
    ],
)
def test_the_litellm_component_carries_the_stacks_own_gateway_files(
    copy: str, original: str
) -> None:
    # Kustomize reads files inside a kustomization only: these are copies.
    copied = (KUBERNETES_DIR / copy).read_bytes()
    assert copied == (REPO_ROOT / original).read_bytes(), (
        f"refresh the copy: cp {original} deploy/kubernetes/{copy}"
    )


def test_the_upgrade_selector_applies_the_setup_job_with_all_it_needs(
    rendered: dict[str, Rendered],
) -> None:
    # docs/how-to/kubernetes.md, Upgrade: `kubectl apply -k ... -l
    # 'app.kubernetes.io/component in (config,db-setup)'` runs the setup
    # first; the Job's pod must not wait for a ConfigMap or Secret that
    # selector leaves out (a new settings hash, a regenerated secret).
    selected = {"config", "db-setup"}
    for result in _all(rendered):
        chosen = {
            (obj["kind"], obj["metadata"]["name"])
            for obj in result.objects
            if obj["metadata"].get("labels", {}).get("app.kubernetes.io/component")
            in selected
        }
        job = result.get("Job", "lgos-db-setup")
        assert ("Job", "lgos-db-setup") in chosen
        generated = {
            (obj["kind"], obj["metadata"]["name"])
            for obj in result.objects
            if obj["kind"] in ("ConfigMap", "Secret")
        }
        needed = references(job) & generated
        assert needed, result.name
        assert needed <= chosen, (result.name, needed - chosen)
