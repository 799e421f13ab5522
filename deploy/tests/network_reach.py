"""Whether rendered NetworkPolicies let one pod open a connection to another,
by the Kubernetes rules (ingress side; ``networking.k8s.io/v1``).

A pod that no policy with ``Ingress`` selects takes every connection. One
that some do takes a connection when one of their ingress rules admits the
source (no ``from``: any source; a peer's ``podSelector`` alone: pods of the
policy's namespace; ``namespaceSelector`` alone: every pod of the namespaces
it selects; both: the pods it selects in those namespaces) on the port (no
``ports``: any; a number, or a name of one of the pod's container ports).
The kubelet's probes are not connections in this sense (NetworkPolicy
always lets a pod's node in), so they are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pod:
    """A pod as policies see it: its labels, its namespace's labels and its
    container ports (name -> number)."""

    name: str
    labels: dict[str, str]
    namespace: str
    ports: dict[str, int] = field(default_factory=dict)

    @property
    def namespace_labels(self) -> dict[str, str]:
        # Kubernetes labels every namespace with its name.
        return {"kubernetes.io/metadata.name": self.namespace}


def selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A label selector (``{}``: everything) against ``labels``."""
    if selector is None:
        return False
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _ingress_policies(
    policies: Iterable[dict[str, Any]], pod: Pod
) -> list[dict[str, Any]]:
    return [
        policy
        for policy in policies
        if policy["metadata"].get("namespace", pod.namespace) == pod.namespace
        and "Ingress" in policy["spec"].get("policyTypes", ["Ingress"])
        and selects(policy["spec"]["podSelector"], pod.labels)
    ]


def isolated(policies: Iterable[dict[str, Any]], pod: Pod) -> bool:
    """Whether any policy restricts who connects to ``pod``."""
    return bool(_ingress_policies(policies, pod))


def _peer_admits(peer: dict[str, Any], source: Pod, policy_namespace: str) -> bool:
    if "ipBlock" in peer:
        return False  # no policy here names addresses; pods are not ipBlocks
    pods, namespaces = peer.get("podSelector"), peer.get("namespaceSelector")
    if namespaces is None:
        in_namespace = source.namespace == policy_namespace
    else:
        in_namespace = selects(namespaces, source.namespace_labels)
    return in_namespace and (pods is None or selects(pods, source.labels))


def _port_admits(rule: dict[str, Any], target: Pod, port: int) -> bool:
    if "ports" not in rule:
        return True
    for allowed in rule["ports"]:
        named = allowed.get("port")
        if named is None:
            return True
        number = target.ports.get(named) if isinstance(named, str) else named
        if number == port:
            return True
    return False


def reaches(
    policies: Iterable[dict[str, Any]], source: Pod, target: Pod, port: int
) -> bool:
    """Whether ``source`` may open a connection to ``target`` on ``port``."""
    applying = _ingress_policies(policies, target)
    if not applying:
        return True
    for policy in applying:
        for rule in policy["spec"].get("ingress", []):
            peers = rule.get("from")
            admitted = not peers or any(
                _peer_admits(peer, source, target.namespace) for peer in peers
            )
            if admitted and _port_admits(rule, target, port):
                return True
    return False
