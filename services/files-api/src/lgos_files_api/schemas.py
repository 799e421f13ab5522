"""The wire objects of the Files API, shaped as OpenAI's."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from lgos_files_api.records import FileRecord


class FileObject(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    object: Literal["file"] = "file"
    bytes: int
    created_at: int
    expires_at: int | None
    filename: str
    purpose: str
    status: Literal["processed"] = "processed"
    status_details: str | None = None

    @classmethod
    def of(cls, record: FileRecord) -> FileObject:
        return cls(
            id=record.id,
            bytes=record.bytes,
            created_at=record.created_at,
            expires_at=record.expires_at,
            filename=record.filename,
            purpose=record.purpose,
        )


class FileList(BaseModel):
    model_config = ConfigDict(frozen=True)

    object: Literal["list"] = "list"
    data: list[FileObject]
    first_id: str | None
    last_id: str | None
    has_more: bool


class FileDeleted(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    object: Literal["file"] = "file"
    deleted: bool = True


class Health(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Literal["ok"] = "ok"
