"""Bring Open WebUI's Functions in step with the repository's.

``plan_sync`` compares what Open WebUI has with ``function_sources()`` and the
wanted valves, and lists the changes; ``apply`` makes them. A Function is
ours when its ``meta`` carries the ownership marker: ours are created,
updated, given their valves, activated, and deleted when the repository no
longer has them; every other Function is left alone. A second run with the
same input plans nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from lgos_open_webui.bundle import MANAGED_KEY, FunctionSource
from lgos_open_webui.openwebui import OpenWebUI, OpenWebUIError

Action = Literal["create", "update", "valves", "activate", "delete"]


@dataclass(frozen=True)
class Change:
    action: Action
    function_id: str
    detail: str = ""

    def describe(self) -> str:
        verb = "set valves of" if self.action == "valves" else self.action
        text = f"{verb} {self.function_id}"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass
class SyncPlan:
    changes: list[Change] = field(default_factory=list)
    sources: dict[str, FunctionSource] = field(default_factory=dict)
    valves: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The complete valves to write, per Function whose valves change."""


def owned(function: Mapping[str, Any]) -> bool:
    meta = function.get("meta")
    return isinstance(meta, Mapping) and meta.get(MANAGED_KEY) is True


def _differences(source: FunctionSource, current: Mapping[str, Any]) -> list[str]:
    meta = current.get("meta") if isinstance(current.get("meta"), Mapping) else {}
    assert isinstance(meta, Mapping)
    differs = []
    if current.get("content") != source.content:
        differs.append("content")
    if current.get("name") != source.name:
        differs.append("name")
    if meta.get("description") != source.description or not owned(current):
        differs.append("meta")
    return differs


def plan_sync(
    api: OpenWebUI,
    sources: Sequence[FunctionSource],
    wanted_valves: Mapping[str, Any],
) -> SyncPlan:
    """What to change so Open WebUI holds exactly our ``sources``."""
    plan = SyncPlan(sources={source.id: source for source in sources})
    existing = {str(f.get("id")): f for f in api.functions()}
    for source in sources:
        listed = existing.get(source.id)
        if listed is None:
            plan.changes.append(Change("create", source.id, source.name))
            current_valves: dict[str, Any] = {}
            active = False
        else:
            if not owned(listed):
                raise OpenWebUIError(
                    f"a Function {source.id!r} exists that this sync does not own; "
                    "rename or delete it first"
                )
            differs = _differences(source, api.function(source.id))
            if differs:
                plan.changes.append(Change("update", source.id, ", ".join(differs)))
            current_valves = api.valves(source.id)
            active = listed.get("is_active") is True
        changed = sorted(
            key
            for key, value in wanted_valves.items()
            if current_valves.get(key) != value
        )
        if changed:
            plan.changes.append(Change("valves", source.id, ", ".join(changed)))
            plan.valves[source.id] = {**current_valves, **wanted_valves}
        if not active:
            plan.changes.append(Change("activate", source.id))
    for function_id, function in sorted(existing.items()):
        if function_id not in plan.sources and owned(function):
            plan.changes.append(Change("delete", function_id, "not in the repository"))
    return plan


def _form(source: FunctionSource) -> dict[str, Any]:
    return {
        "id": source.id,
        "name": source.name,
        "content": source.content,
        "meta": source.meta(),
    }


def apply(api: OpenWebUI, plan: SyncPlan) -> None:
    """Make the planned changes, in plan order."""
    for change in plan.changes:
        if change.action == "create":
            api.create(_form(plan.sources[change.function_id]))
        elif change.action == "update":
            form = _form(plan.sources[change.function_id])
            form["commit_message"] = "lgos-open-webui-sync"
            api.update(change.function_id, form)
        elif change.action == "valves":
            api.set_valves(change.function_id, plan.valves[change.function_id])
        elif change.action == "activate":
            api.toggle(change.function_id)
        else:
            api.delete(change.function_id)
