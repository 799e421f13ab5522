"""The S3 store: the few object operations the catalog needs, over aiobotocore.

Foreign errors are translated here and nowhere else: a missing key becomes
``None`` (or is ignored on delete), anything else a ``StoreError`` whose
message names the endpoint, the bucket and the cause.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, cast

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from aiohttp import ClientError as TransportError
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
)

from lgos_files_api.errors import StoreError
from lgos_files_api.settings import Settings

if TYPE_CHECKING:
    from aiobotocore.response import StreamingBody
    from types_aiobotocore_s3 import S3Client
    from types_aiobotocore_s3.literals import BucketLocationConstraintType
    from types_aiobotocore_s3.type_defs import CompletedPartTypeDef

logger = logging.getLogger("lgos_files_api")

_MISSING = frozenset({"NoSuchKey", "NoSuchBucket", "NotFound", "404"})
_CHUNK = 64 * 1024


@asynccontextmanager
async def open_store(settings: Settings) -> AsyncIterator[ObjectStore]:
    """An ``ObjectStore`` on one pooled client, closed on exit."""
    config = AioConfig(
        signature_version="s3v4",
        s3={"addressing_style": settings.S3_ADDRESSING_STYLE},
        connect_timeout=settings.S3_CONNECT_TIMEOUT,
        read_timeout=settings.S3_READ_TIMEOUT,
        retries={"max_attempts": settings.S3_MAX_ATTEMPTS, "mode": "standard"},
        max_pool_connections=settings.S3_MAX_CONNECTIONS,
        # botocore otherwise adds a CRC to every upload: an extra pass over
        # each part, and a header some S3-compatible stores mishandle.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    access = settings.S3_ACCESS_KEY
    secret = settings.S3_SECRET_KEY
    async with get_session().create_client(
        "s3",
        endpoint_url=settings.S3_ENDPOINT,
        region_name=settings.S3_REGION,
        aws_access_key_id=access.get_secret_value() if access else None,
        aws_secret_access_key=secret.get_secret_value() if secret else None,
        use_ssl=settings.use_tls,
        verify=settings.tls_verify(),
        config=config,
    ) as client:
        yield ObjectStore(
            client, settings.S3_BUCKET, settings.S3_ENDPOINT, settings.S3_REGION
        )


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class ObjectStore:
    """Objects of one bucket."""

    def __init__(
        self, client: S3Client, bucket: str, endpoint: str, region: str
    ) -> None:
        self._client = client
        self.bucket = bucket
        self._region = region
        self._where = f"{endpoint} (bucket {bucket!r})"

    async def ensure_bucket(self) -> bool:
        """Create the bucket when missing; True if this call created it."""
        try:
            await self._client.head_bucket(Bucket=self.bucket)
            return False
        except ClientError as exc:
            if _code(exc) not in _MISSING:
                raise self._error("check the bucket", exc) from exc
        except (BotoCoreError, TransportError) as exc:
            raise self._error("check the bucket", exc) from exc
        with self._translated("create the bucket"):
            try:
                if self._region == "us-east-1":
                    await self._client.create_bucket(Bucket=self.bucket)
                else:
                    # Outside us-east-1, AWS wants the region spelled out again.
                    region = cast("BucketLocationConstraintType", self._region)
                    await self._client.create_bucket(
                        Bucket=self.bucket,
                        CreateBucketConfiguration={"LocationConstraint": region},
                    )
            except ClientError as exc:
                # Another replica won the race: the bucket is there either way.
                if _code(exc) not in {"BucketAlreadyOwnedByYou"}:
                    raise
        logger.info("bucket.created bucket=%s", self.bucket)
        return True

    async def put(self, key: str, data: bytes, content_type: str) -> None:
        with self._translated("write an object"):
            await self._client.put_object(
                Bucket=self.bucket, Key=key, Body=data, ContentType=content_type
            )

    async def read(self, key: str) -> bytes | None:
        """A small object's bytes, or None when it does not exist."""
        reader = await self.open(key)
        if reader is None:
            return None
        with self._translated("read an object"):
            async with reader.body as body:
                return await body.read()

    async def open(self, key: str) -> ObjectReader | None:
        """A reader of the object, or None when it does not exist."""
        with self._translated("read an object"):
            try:
                response = await self._client.get_object(Bucket=self.bucket, Key=key)
            except ClientError as exc:
                if _code(exc) in _MISSING:
                    return None
                raise
        return ObjectReader(self, response["Body"], response["ContentLength"])

    async def keys(self, prefix: str) -> AsyncGenerator[str, None]:
        """Keys under ``prefix`` in ascending order, a page at a time."""
        token: str | None = None
        while True:
            with self._translated("list objects"):
                if token is None:
                    page = await self._client.list_objects_v2(
                        Bucket=self.bucket, Prefix=prefix
                    )
                else:
                    page = await self._client.list_objects_v2(
                        Bucket=self.bucket, Prefix=prefix, ContinuationToken=token
                    )
            for item in page.get("Contents", []):
                yield item["Key"]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return

    async def delete(self, key: str) -> None:
        """Delete ``key``; deleting a missing key is not an error."""
        with self._translated("delete an object"):
            await self._client.delete_object(Bucket=self.bucket, Key=key)

    def writer(self, key: str, content_type: str, part_size: int) -> ObjectWriter:
        return ObjectWriter(self._client, self, key, content_type, part_size)

    @contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        try:
            yield
        except (ClientError, BotoCoreError, TransportError) as exc:
            raise self._error(action, exc) from exc

    def _error(self, action: str, exc: Exception) -> StoreError:
        if isinstance(exc, EndpointConnectionError | ConnectTimeoutError):
            return StoreError(f"S3 store at {self._where} is unreachable: {exc}")
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            detail = f"{error.get('Code', '?')} {error.get('Message', '')}".strip()
            return StoreError(
                f"S3 store at {self._where} refused to {action}: {detail}"
            )
        return StoreError(f"S3 store at {self._where} failed to {action}: {exc}")


class ObjectReader:
    """An open object body; iterate ``chunks()`` once, or ``close()`` it."""

    def __init__(self, store: ObjectStore, body: StreamingBody, size: int) -> None:
        self._store = store
        self.body = body
        self.size = size

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            with self._store._translated("stream an object"):
                async for chunk in self.body.iter_chunks(_CHUNK):
                    yield chunk
        finally:
            self.close()

    def close(self) -> None:
        self.body.close()


class ObjectWriter:
    """Streams one object to S3, holding at most about one part in memory.

    An object smaller than a part goes up in one PUT when finished; a larger
    one as a multipart upload, a part each time ``part_size`` bytes have
    arrived. Until ``finish`` completes nothing is visible under the key, and
    ``discard`` removes whatever was uploaded (or the finished object).
    """

    def __init__(
        self,
        client: S3Client,
        store: ObjectStore,
        key: str,
        content_type: str,
        part_size: int,
    ) -> None:
        self._client = client
        self._store = store
        self.key = key
        self.content_type = content_type
        self._part_size = part_size
        self._buffer = bytearray()
        self._upload_id: str | None = None
        self._parts: list[CompletedPartTypeDef] = []
        self._finished = False
        self.size = 0

    async def write(self, data: bytes) -> None:
        self._buffer += data
        self.size += len(data)
        if len(self._buffer) >= self._part_size:
            await self._flush_part()

    async def finish(self) -> None:
        if self._upload_id is None:
            await self._store.put(self.key, bytes(self._buffer), self.content_type)
        else:
            if self._buffer:
                await self._flush_part()
            with self._store._translated("complete a multipart upload"):
                await self._client.complete_multipart_upload(
                    Bucket=self._store.bucket,
                    Key=self.key,
                    UploadId=self._upload_id,
                    MultipartUpload={"Parts": self._parts},
                )
        self._buffer = bytearray()
        self._finished = True

    async def discard(self) -> None:
        """Best effort: leave nothing of this object behind. Never raises."""
        self._buffer = bytearray()
        try:
            if self._finished:
                await self._store.delete(self.key)
            elif self._upload_id is not None:
                with self._store._translated("abort a multipart upload"):
                    await self._client.abort_multipart_upload(
                        Bucket=self._store.bucket,
                        Key=self.key,
                        UploadId=self._upload_id,
                    )
        except StoreError:
            logger.warning("upload.discard_failed key=%s", self.key, exc_info=True)

    async def _flush_part(self) -> None:
        with self._store._translated("upload a part"):
            if self._upload_id is None:
                created = await self._client.create_multipart_upload(
                    Bucket=self._store.bucket,
                    Key=self.key,
                    ContentType=self.content_type,
                )
                self._upload_id = created["UploadId"]
            number = len(self._parts) + 1
            # The copy replaces the buffer at once: about one part in memory.
            body = bytes(self._buffer)
            self._buffer = bytearray()
            part = await self._client.upload_part(
                Bucket=self._store.bucket,
                Key=self.key,
                UploadId=self._upload_id,
                PartNumber=number,
                Body=body,
            )
        self._parts.append({"PartNumber": number, "ETag": part["ETag"]})
