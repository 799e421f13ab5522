"""Which LGOS deployments to sync: parsed from ``NAME=PREFIX,URL[,KEY_ENV]``.

A spec names the deployment (used in messages and the ownership marker), the
LiteLLM model-name prefix, the OpenAI base URL of the deployment (ending in
``/v1``) and, optionally, the environment variable holding its API key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lgos_model_sync.errors import UsageError

# The characters LGOS allows in a model id (one URL path segment); a prefix
# uses the same set so ``<prefix>/<model>`` splits unambiguously on the slash.
SEGMENT = re.compile(r"[A-Za-z0-9._~:@-]{1,256}")
_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
_ENV_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Specs in one environment variable are separated by ';' or whitespace; a
# URL never contains raw whitespace and almost never a ';'.
_SPEC_SEPARATOR = re.compile(r"[;\s]+")

# LiteLLM's ``openai/`` provider refuses to route without some api_key, so a
# deployment without authentication still gets a harmless placeholder.
NO_KEY = "no-key"


def is_path_segment(value: str) -> bool:
    """Whether ``value`` is usable as one URL path segment without escaping."""
    return bool(SEGMENT.fullmatch(value)) and value not in {".", ".."}


@dataclass(frozen=True, slots=True)
class Deployment:
    """One LGOS deployment whose graphs become LiteLLM models."""

    name: str
    prefix: str
    base_url: str
    key_env: str | None = None

    def api_key(self, environ: Mapping[str, str]) -> str | None:
        """The deployment's API key from ``environ`` (``None`` without one).

        Raises:
            UsageError: the key variable is named but unset or empty.
        """
        if self.key_env is None:
            return None
        key = environ.get(self.key_env, "")
        if not key:
            raise UsageError(
                f"deployment {self.name!r}: environment variable {self.key_env} "
                "(its API key) is not set"
            )
        return key

    def litellm_api_key(self) -> str:
        """What LiteLLM sends: a reference to the variable, never the secret."""
        return f"os.environ/{self.key_env}" if self.key_env else NO_KEY


class _DeploymentSpec(BaseModel):
    """The validated fields of one spec (the edge; ``Deployment`` is inside)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    name: str
    prefix: str
    base_url: str
    key_env: str | None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("must be 1-64 letters, digits, '.', '_' or '-'")
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not is_path_segment(value):
            raise ValueError(
                "must be one path segment: letters, digits and . _ ~ : @ - only"
            )
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        url = value.rstrip("/")
        scheme, _, rest = url.partition("://")
        if scheme not in {"http", "https"} or not rest or "?" in url or "#" in url:
            raise ValueError(
                "must be an http(s) OpenAI base URL such as http://host:8000/v1"
            )
        return url

    @field_validator("key_env")
    @classmethod
    def _key_env(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_VAR.fullmatch(value):
            raise ValueError("must be an environment variable name")
        return value


def parse_deployment(spec: str) -> Deployment:
    """``NAME=PREFIX,URL[,KEY_ENV]`` -> ``Deployment``.

    Raises:
        UsageError: the spec is malformed; the message quotes it.
    """
    name, equals, rest = spec.strip().partition("=")
    fields = rest.split(",")
    if not equals or len(fields) not in {2, 3}:
        raise UsageError(
            f"deployment spec {spec!r} must look like NAME=PREFIX,URL[,KEY_ENV]"
        )
    prefix, url, *key = (field.strip() for field in fields)
    try:
        parsed = _DeploymentSpec(
            name=name.strip(),
            prefix=prefix,
            base_url=url,
            key_env=key[0] if key and key[0] else None,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        reason = first["msg"].removeprefix("Value error, ")
        raise UsageError(f"deployment spec {spec!r}: {where} {reason}") from None
    return Deployment(
        name=parsed.name,
        prefix=parsed.prefix,
        base_url=parsed.base_url,
        key_env=parsed.key_env,
    )


def split_specs(value: str) -> list[str]:
    """The specs in one environment variable (``;`` or whitespace separated)."""
    return [spec for spec in _SPEC_SEPARATOR.split(value) if spec]


def parse_deployments(specs: Iterable[str]) -> tuple[Deployment, ...]:
    """Every spec parsed; names must be unique and at least one given.

    Raises:
        UsageError: none given, a malformed spec, or a repeated name.
    """
    deployments = tuple(parse_deployment(spec) for spec in specs)
    if not deployments:
        raise UsageError(
            "no deployment given: pass --deployment NAME=PREFIX,URL[,KEY_ENV] "
            "or set LGOS_MODEL_SYNC_DEPLOYMENTS"
        )
    seen: set[str] = set()
    for deployment in deployments:
        if deployment.name in seen:
            raise UsageError(f"deployment name {deployment.name!r} is given twice")
        seen.add(deployment.name)
    return deployments
