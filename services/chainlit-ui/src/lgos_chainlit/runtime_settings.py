"""Runtime settings: a graph's ``client_settings`` as form fields, and back.

The JSON Schema describes the fields; the descriptor's ``defaults`` object is
the authoritative baseline (schema ``default`` keywords are only a fallback).
``setting_fields`` turns the schema into toolkit-neutral ``SettingField``
values, which ``app.py`` renders as Chainlit widgets. Widget values come back
through ``from_widget``; ``encode_settings`` keeps only values that differ
from the defaults and writes them as one compact JSON string for
``metadata.lgos_settings``. LGOS remains the validation authority.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

SETTINGS_KEY = "lgos_settings"
CONVERSATION_KEY = "conversation_id"
METADATA_VALUE_LIMIT = 512

FieldKind = Literal["switch", "select", "slider", "number", "text", "json"]


class SettingsError(ValueError):
    """A value the user typed cannot be sent as a setting."""


@dataclass(frozen=True, slots=True)
class SettingField:
    """One setting, described independently of the UI toolkit."""

    name: str
    kind: FieldKind
    label: str
    default: Any
    description: str | None = None
    choices: tuple[Any, ...] = ()
    integer: bool = False
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None


def _resolve(schema: Mapping[str, Any], node: Any, depth: int = 0) -> dict[str, Any]:
    """``node`` with local ``$ref``s and nullable ``anyOf`` unwrapped."""
    if not isinstance(node, Mapping) or depth > 16:
        return {}
    result = dict(node)
    ref = result.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = schema
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        result = {**_resolve(schema, target, depth + 1), **result}
    options = result.get("anyOf") or result.get("oneOf")
    if isinstance(options, list):
        resolved = [_resolve(schema, option, depth + 1) for option in options]
        non_null = [option for option in resolved if option.get("type") != "null"]
        consts = [option["const"] for option in non_null if "const" in option]
        if non_null and len(consts) == len(non_null):
            result.setdefault("enum", consts)
        elif len(non_null) == 1:
            result = {
                **non_null[0],
                **{k: v for k, v in result.items() if k not in ("anyOf", "oneOf")},
            }
    return result


def _label(name: str, node: Mapping[str, Any]) -> str:
    title = node.get("title")
    if isinstance(title, str) and title:
        return title
    return name.replace("_", " ").capitalize()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _field(name: str, node: dict[str, Any], default: Any) -> SettingField:
    label = _label(name, node)
    description = node.get("description")
    description = description if isinstance(description, str) else None
    kind_of = node.get("type")
    common: dict[str, Any] = {
        "name": name,
        "label": label,
        "default": default,
        "description": description,
    }
    enum = node.get("enum")
    if "const" in node and not isinstance(enum, list):
        enum = [node["const"]]
    if isinstance(enum, list) and enum:
        return SettingField(kind="select", choices=tuple(enum), **common)
    if kind_of == "boolean":
        return SettingField(kind="switch", **common)
    if kind_of in ("integer", "number"):
        integer = kind_of == "integer"
        low = _number(node.get("minimum"))
        high = _number(node.get("maximum"))
        step = _number(node.get("multipleOf"))
        if low is not None and high is not None and high > low:
            if step is None:
                step = 1.0 if integer else (high - low) / 100
            return SettingField(
                kind="slider",
                integer=integer,
                minimum=low,
                maximum=high,
                step=step,
                **common,
            )
        return SettingField(
            kind="number", integer=integer, minimum=low, maximum=high, **common
        )
    if kind_of == "string":
        return SettingField(kind="text", **common)
    return SettingField(kind="json", **common)


def setting_fields(descriptor: Mapping[str, Any] | None) -> list[SettingField]:
    """The fields of a ``client_settings`` descriptor, in schema order."""
    if not descriptor:
        return []
    schema = descriptor.get("json_schema")
    if not isinstance(schema, Mapping):
        return []
    defaults = descriptor.get("defaults")
    defaults = defaults if isinstance(defaults, Mapping) else {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    fields = []
    for name, raw in properties.items():
        node = _resolve(schema, raw)
        default = defaults[name] if name in defaults else node.get("default")
        fields.append(_field(str(name), node, default))
    return fields


def to_widget(field: SettingField, value: Any) -> Any:
    """A setting value as its widget shows it."""
    if field.kind == "select":
        return json.dumps(value)
    if field.kind == "json":
        return json.dumps(value)
    if field.kind == "text":
        return "" if value is None else str(value)
    return value


def from_widget(field: SettingField, raw: Any) -> Any:
    """A widget's value as the JSON value of the setting."""
    if field.kind == "switch":
        return bool(raw)
    if field.kind == "select":
        try:
            value = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            value = raw
        if value not in field.choices:
            raise SettingsError(f"{field.label}: {raw!r} is not one of the choices")
        return value
    if field.kind in ("slider", "number"):
        if raw is None or raw == "":
            return field.default
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise SettingsError(f"{field.label}: {raw!r} is not a number") from None
        if not math.isfinite(number):
            raise SettingsError(f"{field.label}: {raw!r} is not a finite number")
        if field.integer:
            if not number.is_integer():
                raise SettingsError(f"{field.label}: {raw!r} is not a whole number")
            return int(number)
        return number
    if field.kind == "text":
        return "" if raw is None else str(raw)
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            raise SettingsError(f"{field.label}: not valid JSON") from None
    return raw


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, bool) or isinstance(default, bool):
        return type(value) is type(default) and value == default
    return bool(value == default)


def changed_settings(
    fields: list[SettingField], values: Mapping[str, Any]
) -> dict[str, Any]:
    """The values that differ from the advertised defaults, in field order.

    ``values`` are setting values (already through ``from_widget``); unknown
    names are ignored. ``1 == 1.0`` counts as unchanged, as in JSON.
    """
    changed: dict[str, Any] = {}
    for field in fields:
        if field.name in values:
            value = values[field.name]
            if not _same(value, field.default):
                changed[field.name] = value
    return changed


def encode_settings(changed: Mapping[str, Any]) -> str | None:
    """``metadata.lgos_settings`` for the changed values, or ``None`` for none."""
    if not changed:
        return None
    encoded = json.dumps(dict(changed), separators=(",", ":"), ensure_ascii=False)
    if len(encoded) > METADATA_VALUE_LIMIT:
        raise SettingsError(
            f"the changed settings take {len(encoded)} characters; metadata values "
            f"allow {METADATA_VALUE_LIMIT}"
        )
    return encoded


def request_metadata(
    conversation_id: str | None, settings: str | None
) -> dict[str, str]:
    """The request's ``metadata``: the chat's correlation id and the settings."""
    metadata: dict[str, str] = {}
    if conversation_id:
        metadata[CONVERSATION_KEY] = conversation_id
    if settings is not None:
        metadata[SETTINGS_KEY] = settings
    return metadata
