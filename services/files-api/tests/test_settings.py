"""LGOS_FILES_* settings: read from the environment, checked before serving."""

from __future__ import annotations

import pytest
from lgos_files_api.settings import MIB, Settings
from pydantic import ValidationError


def test_settings_come_from_prefixed_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LGOS_FILES_API_KEYS", '{"sk-1": "alice", "sk-2": "bob"}')
    monkeypatch.setenv("LGOS_FILES_S3_ENDPOINT", "https://s3.example.test/")
    monkeypatch.setenv("LGOS_FILES_S3_BUCKET", "my-files")
    monkeypatch.setenv("LGOS_FILES_S3_ACCESS_KEY", "access")
    monkeypatch.setenv("LGOS_FILES_S3_SECRET_KEY", "secret")
    monkeypatch.setenv("LGOS_FILES_MAX_UPLOAD_BYTES", "1048576")
    monkeypatch.setenv("LGOS_FILES_SWEEP_INTERVAL_SECONDS", "5")

    settings = Settings()

    assert settings.API_KEYS == {"sk-1": "alice", "sk-2": "bob"}
    assert settings.S3_ENDPOINT == "https://s3.example.test"
    assert settings.use_tls is True
    assert settings.tls_verify() is True
    assert settings.S3_BUCKET == "my-files"
    assert settings.MAX_UPLOAD_BYTES == MIB
    assert settings.SWEEP_INTERVAL_SECONDS == 5
    # Secrets stay out of reprs and logs.
    assert "secret" not in repr(settings)
    assert "sk-1" not in repr(settings)


def test_tls_verification_can_use_a_bundle_or_be_off() -> None:
    keys = {"k": "o"}
    bundle = Settings(API_KEYS=keys, S3_CA_BUNDLE="/etc/ssl/ca.pem")
    off = Settings(API_KEYS=keys, S3_VERIFY_TLS=False)

    assert bundle.tls_verify() == "/etc/ssl/ca.pem"
    assert off.tls_verify() is False


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"API_KEYS": {}}, "API_KEYS"),
        ({"API_KEYS": {"k": "../escape"}}, "API_KEYS"),
        ({"API_KEYS": {" ": "owner"}}, "API_KEYS"),
        ({"S3_ENDPOINT": "ftp://store"}, "S3_ENDPOINT"),
        ({"PART_SIZE_BYTES": 1024}, "PART_SIZE_BYTES"),
        ({"SWEEP_INTERVAL_SECONDS": 0}, "SWEEP_INTERVAL_SECONDS"),
        ({"S3_BUCKET": "ab"}, "S3_BUCKET"),
    ],
)
def test_invalid_settings_are_refused_naming_the_field(
    overrides: dict[str, object], field: str
) -> None:
    values: dict[str, object] = {"API_KEYS": {"k": "owner"}} | overrides

    with pytest.raises(ValidationError) as raised:
        Settings(**values)

    assert raised.value.errors()[0]["loc"][0] == field


def test_api_keys_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LGOS_FILES_API_KEYS", raising=False)

    with pytest.raises(ValidationError, match="API_KEYS"):
        Settings()
