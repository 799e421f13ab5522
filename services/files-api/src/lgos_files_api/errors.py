"""The errors of the Files API, as plain exception types.

They know nothing of HTTP; ``envelope.py`` holds the one table that turns each
into a status code and the OpenAI error envelope::

    FilesApiError
    ├── AuthenticationError    no key, or a key nobody configured
    ├── InvalidRequestError    a bad form field or query parameter (``param``)
    │   └── MalformedUploadError   not multipart, broken or cut-off body
    ├── FileMissingError       unknown, expired, deleted or someone else's file
    ├── FileTooLargeError      over ``MAX_UPLOAD_BYTES``
    ├── TooManyUploadsError    the owner's or the process's uploads at their cap
    ├── UploadStalledError     the body stopped arriving (``UPLOAD_IDLE_TIMEOUT``)
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


class TooManyUploadsError(FilesApiError):
    """An upload refused at once: its owner, or the process, already
    receives as many as it may; ``retry_after`` seconds is a fair wait."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UploadStalledError(FilesApiError):
    """Nothing of the body arrived for ``seconds``: the upload is given up."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"The upload stalled: no data arrived for {seconds:g} seconds."
        )


class StoreError(FilesApiError):
    """The object store failed; the message names the endpoint and the cause,
    for the log only (callers, /health included, learn just that it failed)."""
