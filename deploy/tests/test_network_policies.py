"""The NetworkPolicies deny by default and allow the stack's own flows.

Read offline from the rendered trees (``network_reach`` applies the
Kubernetes rules): every pod is isolated; every connection a workload's
configuration names (an address ``<service>:<port>`` in its environment, its
ConfigMaps and its Secrets, and KEDA's database URL) is allowed; and a pod
that is not part of the stack, in the namespace or in another one, reaches
none of the Files API (whose service key acts for any owner), PostgreSQL,
MinIO, the worker's metrics port or the demo services.
"""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest
from deploy_support import Rendered, containers, pod_spec
from network_reach import Pod, isolated, reaches

NAMESPACE = "lgos"
INTRUDERS = (
    Pod("a pod of the namespace", {"app": "anything"}, NAMESPACE),
    Pod("a pod of another namespace", {"app": "anything"}, "elsewhere"),
)
KEDA = Pod("KEDA", {"app.kubernetes.io/name": "keda-operator"}, "keda")
PROMETHEUS = Pod("Prometheus", {"app.kubernetes.io/name": "prometheus"}, "monitoring")
ADDRESS = re.compile(r"\b(lgos-[a-z0-9-]+):(\d+)\b")
SHARED_BUT_UNUSED = frozenset(
    ("lgos-db-setup", service)
    for service in ("lgos-demo-model", "lgos-demo-search", "lgos-files-api")
)
"""Addresses the db-setup Job is given with the settings it shares with the
API and the workers (lgos-settings), and never calls: it migrates the
database and ends."""


def _pods(rendered: Rendered) -> dict[str, Pod]:
    """Each workload's pods, by workload name."""
    pods = {}
    for workload in rendered.workloads():
        ports = {
            port["name"]: port["containerPort"]
            for box in containers(workload)
            for port in box.get("ports", [])
            if "name" in port
        }
        name = workload["metadata"]["name"]
        labels = workload["spec"]["template"]["metadata"]["labels"]
        pods[name] = Pod(name, labels, NAMESPACE, ports)
    return pods


def _policies(rendered: Rendered) -> list[dict[str, Any]]:
    return rendered.of_kind("NetworkPolicy")


def _service_target(
    rendered: Rendered, pods: dict[str, Pod], service: str, port: int
) -> tuple[Pod, int]:
    """The pod behind ``service`` and the container port ``port`` lands on."""
    spec = rendered.get("Service", service)["spec"]
    [target] = [
        pod
        for pod in pods.values()
        if all(pod.labels.get(k) == v for k, v in spec["selector"].items())
    ]
    [mapping] = [p for p in spec["ports"] if p["port"] == port]
    target_port = mapping.get("targetPort", port)
    number = target.ports[target_port] if isinstance(target_port, str) else target_port
    return target, number


def _texts(rendered: Rendered, workload: dict[str, Any]) -> list[str]:
    """Every value the workload's containers are given: literal env values,
    the ConfigMaps and Secrets they read or mount."""
    texts: list[str] = []
    maps: set[str] = set()
    secrets: set[str] = set()
    for box in containers(workload):
        texts.extend(" ".join(box.get("command", []) + box.get("args", [])).split())
        for item in box.get("env", []):
            texts.append(item.get("value", ""))
            source = item.get("valueFrom", {})
            if "secretKeyRef" in source:
                secrets.add(source["secretKeyRef"]["name"])
            if "configMapKeyRef" in source:
                maps.add(source["configMapKeyRef"]["name"])
        for source in box.get("envFrom", []):
            if "configMapRef" in source:
                maps.add(source["configMapRef"]["name"])
    for volume in pod_spec(workload).get("volumes", []):
        if "configMap" in volume:
            maps.add(volume["configMap"]["name"])
    for name in maps:
        texts.extend(rendered.get("ConfigMap", name).get("data", {}).values())
    for name in secrets:
        data = rendered.get("Secret", name).get("data", {})
        texts.extend(base64.b64decode(value).decode() for value in data.values())
    return texts


def _needed_flows(rendered: Rendered) -> set[tuple[str, str, int]]:
    """(workload, service, port) of every address a workload is configured
    with, plus KEDA's reading of the queue."""
    services = {s["metadata"]["name"] for s in rendered.of_kind("Service")}
    flows = set()
    for workload in rendered.workloads():
        for text in _texts(rendered, workload):
            for service, port in ADDRESS.findall(text):
                name = workload["metadata"]["name"]
                if service in services and (name, service) not in SHARED_BUT_UNUSED:
                    flows.add((name, service, int(port)))
    for auth in rendered.of_kind("TriggerAuthentication"):
        for ref in auth["spec"]["secretTargetRef"]:
            value = rendered.get("Secret", ref["name"])["data"][ref["key"]]
            for service, port in ADDRESS.findall(base64.b64decode(value).decode()):
                flows.add(("KEDA", service, int(port)))
    return flows


@pytest.mark.parametrize("name", ["base", "overlays/try-out", "overlays/production"])
def test_every_pod_is_isolated_by_default(
    rendered: dict[str, Rendered], name: str
) -> None:
    result = rendered[name]
    policies = _policies(result)

    open_pods = [p.name for p in _pods(result).values() if not isolated(policies, p)]

    assert open_pods == []
    assert any(p["spec"]["podSelector"] == {} for p in policies)  # the default


def test_every_flow_the_try_out_is_configured_with_is_allowed(
    try_out: Rendered,
) -> None:
    pods = _pods(try_out)
    policies = _policies(try_out)
    flows = _needed_flows(try_out)
    sources = {**pods, "KEDA": KEDA}

    refused = [
        flow
        for flow in sorted(flows)
        if not reaches(
            policies, sources[flow[0]], *_service_target(try_out, pods, *flow[1:])
        )
    ]

    # The flows found are the stack's: graphs to the Files API, model and
    # search; the Files API to MinIO; everyone to PostgreSQL; LiteLLM to LGOS.
    assert {
        ("lgos-api", "lgos-files-api", 8100),
        ("lgos-worker", "lgos-files-api", 8100),
        ("lgos-worker", "lgos-demo-model", 8001),
        ("lgos-files-api", "lgos-minio", 9000),
        ("lgos-api", "lgos-postgres", 5432),
        ("lgos-worker", "lgos-postgres", 5432),
        ("lgos-db-setup", "lgos-postgres", 5432),
        ("KEDA", "lgos-postgres", 5432),
        ("lgos-litellm", "lgos-api", 8000),
    } <= flows
    assert refused == []


@pytest.mark.parametrize(
    ("service", "port"),
    [
        ("lgos-files-api", 8100),
        ("lgos-postgres", 5432),
        ("lgos-minio", 9000),
        ("lgos-demo-model", 8001),
        ("lgos-demo-search", 8002),
    ],
)
def test_no_pod_outside_the_stack_reaches_its_private_services(
    try_out: Rendered, service: str, port: int
) -> None:
    pods = _pods(try_out)
    target, number = _service_target(try_out, pods, service, port)
    outsiders = [*INTRUDERS, pods["lgos-litellm"]]

    reached = [
        p.name for p in outsiders if reaches(_policies(try_out), p, target, number)
    ]

    assert reached == []


def test_the_worker_metrics_port_is_closed_but_to_prometheus(
    try_out: Rendered, production: Rendered
) -> None:
    for result in (try_out, production):
        worker = _pods(result)["lgos-worker"]
        policies = _policies(result)
        health = worker.ports["health"]
        for outsider in INTRUDERS:
            assert not reaches(policies, outsider, worker, health), result.name
        # Only the production overlay has the monitoring component.
        assert reaches(policies, PROMETHEUS, worker, health) == (result is production)


def test_clients_reach_the_api_and_the_gateway(try_out: Rendered) -> None:
    pods = _pods(try_out)
    policies = _policies(try_out)

    for client in INTRUDERS:
        assert reaches(policies, client, pods["lgos-api"], 8000)
        assert reaches(policies, client, pods["lgos-litellm"], 4000)


def test_without_policies_everything_reaches_the_files_api() -> None:
    """The checks above can fail: an unprotected pod takes any connection,
    and a default deny alone refuses even the API's."""
    files_api = Pod("files", {"app.kubernetes.io/name": "lgos-files-api"}, NAMESPACE)
    api = Pod("api", {"app.kubernetes.io/name": "lgos-api"}, NAMESPACE)
    deny = {"metadata": {"name": "deny"}, "spec": {"podSelector": {}}}

    assert reaches([], INTRUDERS[0], files_api, 8100)
    assert not reaches([deny], api, files_api, 8100)
