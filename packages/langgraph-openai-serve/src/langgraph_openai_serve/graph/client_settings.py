"""Public per-request runtime settings a graph author chooses to expose.

A ``ClientSettings`` subclass is validated once, when its graph is
registered: the inherited strict/frozen/extra-forbid behaviour must stay, every
field needs a default, and the discovery descriptor (JSON Schema 2020-12 plus
validated defaults) is computed then. Each request only merges and validates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from langgraph_openai_serve.deprecation import warn_renamed
from langgraph_openai_serve.graph.errors import (
    GraphConfigurationError,
    InvalidRequestError,
)

if TYPE_CHECKING:
    from langgraph_openai_serve.graph.request import GraphRequest

SETTINGS_METADATA_KEY = "lgos_settings"
SETTINGS_PARAM = f"metadata.{SETTINGS_METADATA_KEY}"
CLIENT_SETTINGS_SCHEMA_VERSION = 1
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _SettingsValidationError(InvalidRequestError):
    """Invalid ``metadata.lgos_settings``: an ``InvalidRequestError``.

    Public only as the reference's deprecated ``ClientSettingsValidationError``
    (this module's ``__getattr__``), so ``except`` clauses written against the
    reference keep catching settings errors.
    """


_SettingsValidationError.__name__ = "ClientSettingsValidationError"
_SettingsValidationError.__qualname__ = "ClientSettingsValidationError"


def __getattr__(name: str) -> Any:
    if name == "ClientSettingsValidationError":
        warn_renamed("ClientSettingsValidationError", "InvalidRequestError")
        return _SettingsValidationError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_LOCKED_CONFIG = {
    "strict": True,
    "frozen": True,
    "extra": "forbid",
    "validate_default": True,
}


class ClientSettings(BaseModel):
    """Base class for the settings a client may change per request.

    Subclasses add fields with defaults; they must not loosen the config.
    """

    model_config = ConfigDict(**_LOCKED_CONFIG)  # type: ignore[typeddict-item]

    _lgos_contract: ClassVar[ClientSettingsContract | None] = None

    @classmethod
    def defaults(cls) -> Self:
        """The registration-validated default settings."""
        return cls.model_validate_json(json.dumps(contract_for(cls).defaults))

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> Self:
        """Merge ``metadata.lgos_settings`` over the defaults and validate."""
        contract = contract_for(cls)
        encoded = metadata.get(SETTINGS_METADATA_KEY)
        if encoded is None:
            return cls.defaults()
        try:
            changes = json.loads(encoded)
        except ValueError:
            raise _SettingsValidationError(
                "metadata.lgos_settings must be a JSON object.", param=SETTINGS_PARAM
            ) from None
        if not isinstance(changes, dict):
            raise _SettingsValidationError(
                "metadata.lgos_settings must be a JSON object.", param=SETTINGS_PARAM
            )
        merged = {**contract.defaults, **changes}
        try:
            return cls.model_validate_json(json.dumps(merged))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "settings"
            raise _SettingsValidationError(
                f"Invalid runtime setting '{where}': {first['msg']}.",
                param=SETTINGS_PARAM,
            ) from None

    @classmethod
    def validate_request(cls, request: GraphRequest) -> Self:
        """Deprecated: ``from_metadata(request.metadata)``.

        Raises:
            InvalidRequestError: (``ClientSettingsValidationError``) invalid
                ``metadata.lgos_settings``.
        """
        warn_renamed(
            "ClientSettings.validate_request(request)",
            "ClientSettings.from_metadata(request.metadata)",
        )
        return cls.from_metadata(request.metadata)


@dataclass(frozen=True, slots=True)
class ClientSettingsContract:
    """What registration proved about one settings model."""

    json_schema: dict[str, Any]
    defaults: dict[str, Any]

    def descriptor(self) -> dict[str, Any]:
        """The ``lgos.client_settings`` discovery object."""
        return {
            "schema_version": CLIENT_SETTINGS_SCHEMA_VERSION,
            "json_schema": self.json_schema,
            "defaults": self.defaults,
        }


def contract_for(model: type[ClientSettings]) -> ClientSettingsContract:
    """Validate ``model`` once and return its cached contract."""
    cached = model.__dict__.get("_lgos_contract")
    if isinstance(cached, ClientSettingsContract):
        return cached
    contract = _build_contract(model)
    model._lgos_contract = contract
    return contract


def _build_contract(model: type[ClientSettings]) -> ClientSettingsContract:
    name = getattr(model, "__name__", repr(model))
    if not (isinstance(model, type) and issubclass(model, ClientSettings)):
        raise GraphConfigurationError(
            f"client_settings must be a ClientSettings subclass, got {name}."
        )
    if model is ClientSettings:
        raise GraphConfigurationError(
            "client_settings must be a subclass of ClientSettings with fields."
        )
    for key, expected in _LOCKED_CONFIG.items():
        if model.model_config.get(key) != expected:
            raise GraphConfigurationError(
                f"{name} must keep the inherited model_config {key}={expected!r}."
            )
    for field_name, info in model.model_fields.items():
        if info.is_required():
            raise GraphConfigurationError(
                f"{name}.{field_name} needs a default: clients may omit any setting."
            )
        if info.exclude:
            raise GraphConfigurationError(
                f"{name}.{field_name} is excluded from serialization; public "
                "settings must round-trip through JSON."
            )
    try:
        defaults = model().model_dump(mode="json")
        model.model_validate_json(json.dumps(defaults))
    except (ValidationError, TypeError, ValueError) as exc:
        raise GraphConfigurationError(f"{name} has invalid defaults: {exc}") from exc
    schema = {"$schema": JSON_SCHEMA_DIALECT, **model.model_json_schema()}
    return ClientSettingsContract(json_schema=schema, defaults=defaults)
