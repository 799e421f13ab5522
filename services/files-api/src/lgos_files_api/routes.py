"""The HTTP routes: ``/v1/files`` and ``/health``.

Routes only translate: headers and query in, wire objects out. Storing,
listing and expiry live in the catalog; the streamed upload in ``upload``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from starlette.responses import Response, StreamingResponse

from lgos_files_api.body import body_chunks
from lgos_files_api.deps import CallerDep, OwnerDep, ServicesDep
from lgos_files_api.envelope import error_response
from lgos_files_api.errors import InvalidRequestError, StoreError
from lgos_files_api.records import PURPOSES, SERVICE_PURPOSES, is_file_id
from lgos_files_api.schemas import FileDeleted, FileList, FileObject, Health
from lgos_files_api.upload import UploadRequest, receive_upload

router = APIRouter()

logger = logging.getLogger("lgos_files_api")


@router.post("/v1/files")
async def create_file(
    request: Request, caller: CallerDep, services: ServicesDep
) -> FileObject:
    # The body is read here as a stream, never through request.form(), which
    # would spool the whole file before the first byte could reach S3.
    upload = UploadRequest(
        owner=caller.owner,
        service=caller.service,
        content_type=request.headers.get("content-type"),
        content_length=_content_length(request.headers.get("content-length")),
    )
    record = await receive_upload(
        upload,
        body_chunks(request.receive, services.upload_idle_timeout),
        catalog=services.catalog,
        max_bytes=services.max_upload_bytes,
        clock=services.clock,
        slots=services.uploads,
    )
    return FileObject.of(record)


@router.get("/v1/files")
async def list_files(
    owner: OwnerDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 10_000,
    order: Literal["asc", "desc"] = "desc",
    after: str | None = None,
    purpose: str | None = None,
) -> FileList:
    if after is not None and not is_file_id(after):
        raise InvalidRequestError(
            f"Invalid value for 'after': '{after}' is not a file id.", param="after"
        )
    if purpose is not None and purpose not in PURPOSES | SERVICE_PURPOSES:
        raise InvalidRequestError(
            f"Invalid value for 'purpose': '{purpose}'.", param="purpose"
        )
    page = await services.catalog.page(
        owner,
        services.clock(),
        limit=limit,
        order=order,
        after=after,
        purpose=purpose,
    )
    data = [FileObject.of(record) for record in page.records]
    return FileList(
        data=data,
        first_id=data[0].id if data else None,
        last_id=data[-1].id if data else None,
        has_more=page.has_more,
    )


@router.get("/v1/files/{file_id}")
async def retrieve_file(
    file_id: str, owner: OwnerDep, services: ServicesDep
) -> FileObject:
    return FileObject.of(await services.catalog.get(owner, file_id, services.clock()))


@router.get("/v1/files/{file_id}/content")
async def file_content(
    file_id: str, owner: OwnerDep, services: ServicesDep
) -> StreamingResponse:
    record = await services.catalog.get(owner, file_id, services.clock())
    reader = await services.catalog.open_content(record)
    headers = {
        # Set as a header: media_type would append a charset to text/* types.
        "Content-Type": record.content_type,
        "Content-Length": str(reader.size),
        # Served as a download: a stored text/html must not render as our page.
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(record.filename)}",
        "X-Content-Type-Options": "nosniff",
    }
    return StreamingResponse(reader.chunks(), headers=headers)


@router.delete("/v1/files/{file_id}")
async def delete_file(
    file_id: str, owner: OwnerDep, services: ServicesDep
) -> FileDeleted:
    await services.catalog.delete(owner, file_id, services.clock())
    return FileDeleted(id=file_id)


@router.get("/health", response_model=Health)
async def health(services: ServicesDep) -> Response | Health:
    """Readiness: the store answers and the bucket exists (created if not).

    Unauthenticated, so it says only ready or not and why in one code: the
    store's endpoint, bucket and error go to the log, never to the caller.
    """
    try:
        await services.catalog.store.ensure_bucket()
    except StoreError as exc:
        logger.error("health.store_unavailable: %s", exc.message)
        return error_response(
            503,
            "The file store is unavailable.",
            "server_error",
            code="store_unavailable",
        )
    return Health()


def _content_length(value: str | None) -> int | None:
    if value is None or not value.isascii() or not value.isdigit():
        return None
    return int(value)
