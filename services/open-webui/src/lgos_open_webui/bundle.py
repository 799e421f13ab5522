"""The Functions this package ships: one Python file each, kept as package data.

A Function's id is its file name (``lgos_responses.py`` -> ``lgos_responses``);
its name and description come from the file's frontmatter (the docstring
Open WebUI itself reads). Every Function we install carries the ownership
marker ``meta.lgos_managed``, so the sync can tell ours from a person's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

MANAGED_KEY = "lgos_managed"
_FRONTMATTER_LINE = re.compile(r"^\s*([a-z_]+):\s*(.*)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class FunctionSource:
    """One Function as the repository has it."""

    id: str
    name: str
    description: str
    content: str

    def meta(self) -> dict[str, object]:
        return {"description": self.description, MANAGED_KEY: True}


def frontmatter(content: str) -> dict[str, str]:
    """The ``key: value`` lines of the leading docstring, as Open WebUI reads them."""
    lines = content.splitlines()
    if not lines or lines[0].strip() != '"""':
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if '"""' in line:
            break
        match = _FRONTMATTER_LINE.match(line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def function_sources() -> list[FunctionSource]:
    """Every Function file in ``lgos_open_webui/functions``, sorted by id."""
    folder = resources.files("lgos_open_webui") / "functions"
    sources = []
    for entry in folder.iterdir():
        if not entry.name.endswith(".py") or entry.name.startswith("_"):
            continue
        content = entry.read_text(encoding="utf-8")
        fields = frontmatter(content)
        function_id = entry.name.removesuffix(".py")
        sources.append(
            FunctionSource(
                id=function_id,
                name=fields.get("title", function_id),
                description=fields.get("description", ""),
                content=content,
            )
        )
    return sorted(sources, key=lambda source: source.id)
