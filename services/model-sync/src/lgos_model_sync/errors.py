"""What can go wrong in a sync, as types the CLI maps to messages once.

```
SyncError                     every failure; the configuration file is left as it was
├── UsageError                bad flags or environment (deployment specs, key variables)
├── CatalogError              one deployment's catalog could not be read or trusted
│   ├── UnreachableError      no HTTP answer (connection refused, timeout, DNS)
│   ├── CatalogHTTPError      an answer, but not 200 (refused key, wrong base URL)
│   ├── MalformedCatalogError not the JSON shape of an LGOS model list or model
│   └── InvalidModelIdError   a model id that is not one URL path segment
├── ConfigFileError           LiteLLM's configuration cannot be read or rewritten safely
└── ConflictError             two sources want the same LiteLLM model name
```
"""

from __future__ import annotations


class SyncError(Exception):
    """A sync that must not touch the configuration file."""


class UsageError(SyncError):
    """The sync was configured wrongly (flags or environment)."""


class CatalogError(SyncError):
    """One deployment's model catalog could not be read or trusted."""

    def __init__(self, deployment: str, source: str, detail: str) -> None:
        self.deployment = deployment
        self.source = source
        self.detail = detail
        super().__init__(f"deployment {deployment!r} ({source}): {detail}")


class UnreachableError(CatalogError):
    """The deployment did not answer at all."""


class CatalogHTTPError(CatalogError):
    """The deployment answered with a status other than 200."""


class MalformedCatalogError(CatalogError):
    """The answer is not an LGOS model list or model object."""


class InvalidModelIdError(CatalogError):
    """A model id cannot be used as one URL path segment."""


class ConfigFileError(SyncError):
    """LiteLLM's configuration file cannot be read or safely rewritten."""


class ConflictError(SyncError):
    """A model name the sync would write is already taken."""
