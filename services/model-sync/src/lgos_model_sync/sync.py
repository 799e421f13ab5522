"""One sync: read the configuration, read every catalog, plan, render, write.

Everything is read and checked before anything is written, so any error
leaves the configuration file exactly as it was.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from lgos_model_sync.atomic import read_text, write_atomic
from lgos_model_sync.catalog import read_catalog
from lgos_model_sync.deployments import Deployment
from lgos_model_sync.document import ConfigDocument
from lgos_model_sync.entries import desired_entries
from lgos_model_sync.errors import ConfigFileError
from lgos_model_sync.plan import Plan, plan_merge


@dataclass(frozen=True, slots=True)
class SyncOptions:
    """What to sync into which file, under which owner id."""

    config_path: Path
    deployments: tuple[Deployment, ...]
    owner: str
    timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class SyncResult:
    """The file's text before and after, and the entry-level changes."""

    path: Path
    old_text: str | None
    new_text: str
    plan: Plan

    @property
    def changed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """A unified diff of the file (empty when nothing changes)."""
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                (self.old_text or "").splitlines(keepends=True),
                self.new_text.splitlines(keepends=True),
                fromfile=name if self.old_text is not None else "/dev/null",
                tofile=name,
            )
        )


def plan_sync(
    options: SyncOptions,
    environ: Mapping[str, str],
    transport: httpx.BaseTransport | None = None,
) -> SyncResult:
    """Compute the new configuration without writing it.

    Raises:
        SyncError: any bad input; nothing has been written.
    """
    try:
        old_text = read_text(options.config_path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read {options.config_path}: {exc}") from None
    document = ConfigDocument.parse(old_text or "")
    keys = {d.name: d.api_key(environ) for d in options.deployments}
    with httpx.Client(timeout=options.timeout, transport=transport) as client:
        catalogs = [
            read_catalog(deployment, client, keys[deployment.name])
            for deployment in options.deployments
        ]
    plan = plan_merge(
        document.model_list, options.owner, desired_entries(catalogs, options.owner)
    )
    new_text = document.render(plan.model_list, options.owner)
    return SyncResult(
        path=options.config_path, old_text=old_text, new_text=new_text, plan=plan
    )


def apply(result: SyncResult) -> bool:
    """Write the new text when it differs; whether the file was written.

    Raises:
        ConfigFileError: the file could not be replaced (it is unchanged).
    """
    if not result.changed:
        return False
    try:
        write_atomic(result.path, result.new_text)
    except OSError as exc:
        raise ConfigFileError(f"cannot write {result.path}: {exc}") from None
    return True


def sync(
    options: SyncOptions,
    environ: Mapping[str, str],
    transport: httpx.BaseTransport | None = None,
) -> SyncResult:
    """Plan and apply one sync."""
    result = plan_sync(options, environ, transport)
    apply(result)
    return result
