"""The errors of the Files API, as plain exception types.

They know nothing of HTTP; ``envelope.py`` holds the one table that turns each
into a status code and the OpenAI error envelope::

    FilesApiError
    ├── AuthenticationError    no key, or a key nobody configured
    ├── PermissionDeniedError  a valid key asking for what it may not do
    ├── InvalidRequestError    a bad form field or query parameter (``param``)
    │   └── MalformedUploadError   not multipart, broken or cut-off body
    ├── FileMissingError       unknown, expired, deleted or someone else's file
    ├── FileTooLargeError      over ``MAX_UPLOAD_BYTES``
    └── StoreError             the S3 store failed or cannot be reached
"""

from __future__ import annotations


class FilesApiError(Exception):
    """Base of every error this service answers with an envelope."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


class AuthenticationError(FilesApiError):
    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class PermissionDeniedError(FilesApiError):
    pass


class InvalidRequestError(FilesApiError):
    pass


class MalformedUploadError(InvalidRequestError):
    pass


class FileMissingError(FilesApiError):
    def __init__(self, file_id: str) -> None:
        super().__init__(f"No such File object: {file_id}", param="id")


class FileTooLargeError(FilesApiError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"File exceeds the maximum upload size of {limit} bytes.", param="file"
        )
        self.limit = limit


class StoreError(FilesApiError):
    """The object store failed; the message names the endpoint and the cause."""
