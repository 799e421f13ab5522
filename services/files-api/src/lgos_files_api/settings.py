"""``LGOS_FILES_*`` settings, read from the environment at the edge.

Nothing reads the environment at import time: ``create_app`` and the console
script build a ``Settings`` unless one is passed in, and pass plain values down.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024
# S3 refuses multipart parts under 5 MiB, except the last one.
MIN_PART_SIZE = 5 * MIB
# An owner becomes an S3 key segment, so it is kept to a safe alphabet.
OWNER_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class Settings(BaseSettings):
    """Deployment settings of the Files API."""

    model_config = SettingsConfigDict(
        env_prefix="LGOS_FILES_", frozen=True, extra="ignore"
    )

    S3_ENDPOINT: str = "http://127.0.0.1:8333"
    """S3 endpoint URL; ``https://`` turns TLS on."""
    S3_BUCKET: str = Field(default="lgos-files", min_length=3, max_length=63)
    """Bucket holding file bytes and metadata; created at startup when missing."""
    S3_ACCESS_KEY: SecretStr | None = None
    """Access key; unset falls back to the standard AWS credential chain."""
    S3_SECRET_KEY: SecretStr | None = Field(default=None, repr=False)
    S3_REGION: str = "us-east-1"
    S3_VERIFY_TLS: bool = True
    """Verify the store's TLS certificate (``https://`` endpoints only)."""
    S3_CA_BUNDLE: Path | None = None
    """A CA bundle to verify the store's certificate with, instead of the system's."""
    S3_ADDRESSING_STYLE: Literal["path", "virtual", "auto"] = "path"
    """``path`` suits MinIO and SeaweedFS; AWS accepts both."""
    S3_CONNECT_TIMEOUT: float = Field(default=5.0, gt=0)
    S3_READ_TIMEOUT: float = Field(default=60.0, gt=0)
    S3_MAX_ATTEMPTS: int = Field(default=3, ge=1)
    """Attempts per S3 call, the first included."""
    S3_MAX_CONNECTIONS: int = Field(default=32, ge=1)

    MAX_UPLOAD_BYTES: int = Field(default=512 * MIB, ge=1)
    """Largest file accepted; larger uploads answer 413."""
    PART_SIZE_BYTES: int = Field(default=8 * MIB, ge=MIN_PART_SIZE)
    """Bytes buffered per S3 multipart part: one upload holds up to about
    twice this (its buffer and the copy being sent while a part flushes)."""
    MAX_UPLOADS: int = Field(default=16, ge=1)
    """Uploads this process receives at once, over all owners; one more
    answers 429 at once. With ``MAX_UPLOADS_PER_OWNER`` it bounds the memory
    uploads hold: at most ``MAX_UPLOADS * 2 * PART_SIZE_BYTES`` (256 MiB at
    the defaults)."""
    MAX_UPLOADS_PER_OWNER: int = Field(default=4, ge=1)
    """Uploads one owner has in progress at once in this process; one more
    answers 429 at once (64 MiB at the defaults), so one owner cannot take
    every slot."""
    UPLOAD_IDLE_TIMEOUT: float = Field(default=30.0, gt=0)
    """Seconds an upload's body may pause; past it the upload is discarded,
    its slot and buffer freed, and the sender answered 408."""
    API_KEYS: dict[str, str] = Field(min_length=1, repr=False)
    """Bearer keys as a JSON object ``{"key": "owner"}``; several keys may share
    an owner (rotation). Files belong to the owner, not to the key."""
    SERVICE_KEYS: list[str] = Field(default=[], repr=False)
    """Bearer keys of services (a JSON list), each acting for the owner its
    request names in ``X-Lgos-Owner``; they alone write ``batch_output``
    files. LGOS's Batch API reads inputs and writes results with one."""
    SWEEP_INTERVAL_SECONDS: float = Field(default=60.0, gt=0)
    """Seconds between sweeps that delete the bytes of expired files."""

    @field_validator("S3_ENDPOINT")
    @classmethod
    def _endpoint(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("API_KEYS")
    @classmethod
    def _api_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key, owner in value.items():
            if not key.strip():
                raise ValueError("API keys must not be blank")
            if not OWNER_PATTERN.fullmatch(owner):
                raise ValueError(
                    f"owner {owner!r} must match {OWNER_PATTERN.pattern} "
                    "(it becomes part of S3 keys)"
                )
        return value

    @field_validator("SERVICE_KEYS")
    @classmethod
    def _service_keys(cls, value: list[str]) -> list[str]:
        if any(not key.strip() for key in value):
            raise ValueError("service keys must not be blank")
        return value

    @model_validator(mode="after")
    def _distinct_keys(self) -> Settings:
        if set(self.SERVICE_KEYS) & set(self.API_KEYS):
            raise ValueError("a key cannot be both an owner's and a service's")
        return self

    @property
    def use_tls(self) -> bool:
        return self.S3_ENDPOINT.startswith("https://")

    def tls_verify(self) -> bool | str:
        """botocore's ``verify`` argument: off, the system store, or a bundle."""
        if not self.S3_VERIFY_TLS:
            return False
        return str(self.S3_CA_BUNDLE) if self.S3_CA_BUNDLE else True
