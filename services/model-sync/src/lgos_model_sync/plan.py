"""The merge: today's ``model_list`` plus the desired owned entries.

Unowned entries keep their positions. The owned entries form one block, at
the position of the first owned entry already there (at the end when there
is none), so an entry someone adds after the block stays after it and a
rerun has nothing to move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lgos_model_sync.entries import entry_name, is_owned
from lgos_model_sync.errors import ConflictError


@dataclass(frozen=True, slots=True)
class Plan:
    """The merged model list and what changed, by model name."""

    model_list: tuple[Any, ...]
    added: tuple[str, ...]
    updated: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: tuple[str, ...]
    unowned: int

    @property
    def has_entry_changes(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary(self) -> str:
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("added", self.added),
                ("updated", self.updated),
                ("removed", self.removed),
            )
            if names
        ]
        parts.append(f"{len(self.unchanged)} unchanged")
        parts.append(f"{self.unowned} unowned kept")
        return "; ".join(parts)


def plan_merge(
    current: Sequence[Any], owner: str, desired: Sequence[dict[str, Any]]
) -> Plan:
    """Replace ``owner``'s entries in ``current`` by ``desired``.

    Raises:
        ConflictError: a desired name is repeated, or is already used by an
            entry ``owner`` does not own (LiteLLM would load-balance them).
    """
    desired_names = [entry_name(entry) or "" for entry in desired]
    repeated = sorted({name for name in desired_names if desired_names.count(name) > 1})
    if repeated:
        raise ConflictError(
            f"model names {repeated} would be written twice: give each "
            "deployment its own prefix"
        )
    taken = {entry_name(entry) for entry in current if not is_owned(entry, owner)}
    clashes = sorted(set(desired_names) & {name for name in taken if name})
    if clashes:
        raise ConflictError(
            f"model names {clashes} are already defined by entries that "
            f"{owner!r} does not own; rename them or change the prefix"
        )

    merged: list[Any] = []
    owned: dict[str, Any] = {}
    placed = False
    for entry in current:
        if not is_owned(entry, owner):
            merged.append(entry)
            continue
        owned.setdefault(entry_name(entry) or "", entry)
        if not placed:
            merged.extend(desired)
            placed = True
    if not placed:
        merged.extend(desired)

    wanted = dict(zip(desired_names, desired, strict=True))
    return Plan(
        model_list=tuple(merged),
        added=tuple(name for name in desired_names if name not in owned),
        updated=tuple(
            name
            for name in desired_names
            if name in owned and owned[name] != wanted[name]
        ),
        removed=tuple(sorted(name for name in owned if name not in wanted)),
        unchanged=tuple(
            name
            for name in desired_names
            if name in owned and owned[name] == wanted[name]
        ),
        unowned=len(current) - sum(is_owned(entry, owner) for entry in current),
    )
