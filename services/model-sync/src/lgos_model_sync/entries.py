"""LiteLLM model-list entries: the ones the sync writes, and which it owns.

An entry is owned by a sync when ``model_info.lgos_sync.owner`` equals that
sync's id; everything else in ``model_list`` belongs to someone else and is
never changed. Several syncs (different ids) can share one file.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from lgos_model_sync.catalog import Catalog

OWNER_KEY = "lgos_sync"
DEFAULT_OWNER = "lgos-model-sync"


def model_name(prefix: str, model_id: str) -> str:
    """The LiteLLM model group clients select: ``<prefix>/<model>``."""
    return f"{prefix}/{model_id}"


def is_owned(entry: Any, owner: str) -> bool:
    """Whether ``entry`` (any YAML value) carries ``owner``'s marker."""
    if not isinstance(entry, dict):
        return False
    info = entry.get("model_info")
    marker = info.get(OWNER_KEY) if isinstance(info, dict) else None
    return isinstance(marker, dict) and marker.get("owner") == owner


def entry_name(entry: Any) -> str | None:
    """An entry's ``model_name``, when it has a string one."""
    name = entry.get("model_name") if isinstance(entry, dict) else None
    return name if isinstance(name, str) else None


def desired_entries(catalogs: Iterable[Catalog], owner: str) -> list[dict[str, Any]]:
    """One LiteLLM deployment per graph, sorted by model name.

    Sorting makes the file independent of flag order and of the order a
    deployment lists its graphs, so reruns never reorder anything.
    """
    entries = []
    for catalog in catalogs:
        deployment = catalog.deployment
        for model in catalog.models:
            entries.append(
                {
                    "model_name": model_name(deployment.prefix, model.id),
                    "litellm_params": {
                        # The openai/ provider with api_base forwards Chat
                        # Completions and /v1/responses natively to LGOS.
                        "model": f"openai/{model.id}",
                        "api_base": deployment.base_url,
                        "api_key": deployment.litellm_api_key(),
                    },
                    "model_info": {
                        # A deep copy: the YAML writer must never see one
                        # object twice (it would emit anchors and aliases).
                        "lgos": copy.deepcopy(dict(model.lgos)),
                        OWNER_KEY: {
                            "owner": owner,
                            "deployment": deployment.name,
                            "source": deployment.base_url,
                        },
                    },
                }
            )
    return sorted(entries, key=lambda entry: str(entry["model_name"]))
