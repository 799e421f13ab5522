"""LiteLLM's configuration text, rewritten with the least possible change.

The merged ``model_list`` (see ``plan``) is written back by the first of
these strategies whose result loads as exactly the intended data:

1. splice — only the lines of owned entries are cut out and the rendered
   owned block is put in their place; every other byte stays. Needs a
   block-style ``model_list`` (the usual shape of LiteLLM configs).
2. replace — the ``model_list`` key and its value are rewritten: unowned
   entries stay semantically identical and in order; every other key keeps
   its bytes. Used for flow-style or empty lists, or aliases between entries.
3. append — no ``model_list`` yet: the block is added at the end of the file.
4. dump — the whole file is re-serialized, key order kept, comments lost.
   Only for files the others cannot handle (a flow-style root mapping).

The check after each strategy ("loads as exactly the intended data") is
what makes the text surgery safe: a strategy that would change anything
else is discarded, and if none passes nothing is written.

PyYAML is used because LiteLLM loads its configuration with PyYAML's safe
loader: the same YAML 1.1 rules on both sides.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from lgos_model_sync.entries import is_owned
from lgos_model_sync.errors import ConfigFileError

MODEL_LIST = "model_list"
_NEW_LIST_INDENT = 2


class _Dumper(yaml.SafeDumper):
    """Never anchors/aliases: each entry must stand alone when spliced."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _dump(value: Any) -> str:
    return yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        # No folding of long strings: a folded scalar is harder to indent.
        width=1 << 20,
        indent=2,
    )


@dataclass(frozen=True, slots=True)
class ConfigDocument:
    """A parsed configuration: its text, its data and its node tree."""

    text: str
    data: dict[str, Any]
    root: MappingNode | None
    newline: str

    @classmethod
    def parse(cls, text: str) -> ConfigDocument:
        """Parse LiteLLM's configuration (empty text is an empty config).

        Raises:
            ConfigFileError: not YAML, or not a mapping at the top.
        """
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigFileError(
                f"the configuration is not valid YAML: {exc}"
            ) from None
        if data is None:
            data = {}
        if not isinstance(data, dict) or not isinstance(root, MappingNode | None):
            raise ConfigFileError("the configuration must be a YAML mapping at the top")
        model_list = data.get(MODEL_LIST)
        if model_list is not None and not isinstance(model_list, list):
            raise ConfigFileError(f"{MODEL_LIST} must be a list")
        return cls(
            text=text,
            data=data,
            root=root,
            newline="\r\n" if "\r\n" in text else "\n",
        )

    @property
    def model_list(self) -> list[Any]:
        return list(self.data.get(MODEL_LIST) or [])

    def render(self, model_list: Sequence[Any], owner: str) -> str:
        """The text whose ``model_list`` is ``model_list``, all else kept.

        ``model_list`` must be ``plan_merge``'s result for ``owner``: unowned
        entries as they are, the owned ones as one block.

        Raises:
            ConfigFileError: no strategy reproduces the intended data.
        """
        intended = {**self.data, MODEL_LIST: list(model_list)}
        owned = [entry for entry in model_list if is_owned(entry, owner)]
        strategies: list[Callable[[], str | None]] = [
            lambda: self._splice(owned, owner),
            lambda: self._replace(model_list),
            lambda: self._append(model_list),
            lambda: _dump(intended),
        ]
        for strategy in strategies:
            text = strategy()
            if text is not None and _loads_as(text, intended):
                return text
        raise ConfigFileError(
            f"the configuration cannot be rewritten without changing entries the "
            f"sync does not own (YAML anchors shared with {MODEL_LIST}?)"
        )

    def _model_list_node(self) -> tuple[ScalarNode, Node] | None:
        if self.root is None:
            return None
        for key, value in self.root.value:
            if isinstance(key, ScalarNode) and key.value == MODEL_LIST:
                return key, value
        return None

    def _block(self, entries: Sequence[Any], column: int) -> str:
        """Entries as block-sequence items whose dashes sit at ``column``."""
        if not entries:
            return ""
        pad = " " * column
        lines = _dump(list(entries)).splitlines()
        return "".join((pad + line if line else line) + self.newline for line in lines)

    def _splice(self, owned: Sequence[Any], owner: str) -> str | None:
        found = self._model_list_node()
        if found is None:
            return None
        key, node = found
        if not isinstance(node, SequenceNode) or node.flow_style or not node.value:
            return None
        current = self.model_list
        if len(current) != len(node.value):
            return None
        dashes = _block_entry_indices(self.text)
        spans: list[tuple[int, int]] = []
        for item in node.value:
            span = self._item_span(item, dashes)
            floor = spans[-1][1] if spans else key.end_mark.index
            if span is None or span[0] < floor:
                return None  # an alias or an unusual layout: let another strategy try
            spans.append(span)
        column = self._dash_column(spans[0][0], dashes)
        block = self._block(owned, column)

        pieces: list[str] = []
        cursor = 0
        placed = False
        for entry, (start, end) in zip(current, spans, strict=True):
            if not is_owned(entry, owner):
                continue
            pieces.append(self.text[cursor:start])
            if not placed:
                pieces.append(block)
                placed = True
            cursor = end
        if not placed:
            end = spans[-1][1]
            pieces.append(self.text[:end])
            if end == len(self.text) and not self.text.endswith("\n"):
                pieces.append(self.newline)
            pieces.append(block)
            cursor = end
        pieces.append(self.text[cursor:])
        return "".join(pieces)

    def _item_span(self, item: Node, dashes: list[int]) -> tuple[int, int] | None:
        """From the start of the item's dash line to the end of its last line."""
        position = bisect.bisect_left(dashes, item.start_mark.index) - 1
        if position < 0:
            return None
        dash = dashes[position]
        start = self.text.rfind("\n", 0, dash) + 1
        if self.text[start:dash].strip(" "):
            return None
        return start, _line_end(self.text, _content_end(item))

    def _dash_column(self, line_start: int, dashes: list[int]) -> int:
        position = bisect.bisect_left(dashes, line_start)
        return dashes[position] - line_start

    def _replace(self, model_list: Sequence[Any]) -> str | None:
        found = self._model_list_node()
        if found is None:
            return None
        key, value = found
        start = self.text.rfind("\n", 0, key.start_mark.index) + 1
        if self.text[start : key.start_mark.index].strip(" "):
            return None  # a flow-style root mapping: only a full dump will do
        end = _line_end(self.text, _content_end(value))
        return (
            self.text[:start]
            + self._key_block(model_list, key.start_mark.column)
            + self.text[end:]
        )

    def _append(self, model_list: Sequence[Any]) -> str | None:
        if self._model_list_node() is not None:
            return None
        text = self.text
        if text and not text.endswith("\n"):
            text += self.newline
        return text + self._key_block(model_list, 0)

    def _key_block(self, model_list: Sequence[Any], column: int) -> str:
        pad = " " * column
        if not model_list:
            return f"{pad}{MODEL_LIST}: []{self.newline}"
        return f"{pad}{MODEL_LIST}:{self.newline}" + self._block(
            model_list, column + _NEW_LIST_INDENT
        )


def _block_entry_indices(text: str) -> list[int]:
    """Where every block-sequence dash (``- ``) of the document is."""
    return [
        token.start_mark.index
        for token in yaml.scan(text, Loader=yaml.SafeLoader)
        if isinstance(token, yaml.BlockEntryToken)
    ]


def _content_end(node: Node) -> int:
    """Where a node's own text ends.

    A block collection's end mark lies past the comments and blank lines
    that follow it; its last child's end is where its text really stops.
    """
    if isinstance(node, MappingNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1][1])
    if isinstance(node, SequenceNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1])
    return int(node.end_mark.index)


def _line_end(text: str, index: int) -> int:
    """The start of the line after the one holding ``index``."""
    if index > 0 and text[index - 1] == "\n":
        return index  # a block scalar ends having eaten its line break
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _loads_as(text: str, intended: dict[str, Any]) -> bool:
    try:
        return bool(yaml.safe_load(text) == intended)
    except yaml.YAMLError:
        return False
