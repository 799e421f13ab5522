"""Keeps a LiteLLM proxy's model list in step with LGOS deployments.

Reads each deployment's ``/v1/models`` and ``/v1/models/{id}`` over HTTP and
writes LiteLLM's config-file ``model_list``: one ``<prefix>/<model>`` entry
per graph with the complete ``lgos`` object in ``model_info``. It never
imports the LGOS library: the HTTP API is the contract.
"""

from lgos_model_sync.deployments import Deployment, parse_deployment
from lgos_model_sync.errors import (
    CatalogError,
    CatalogHTTPError,
    ConfigFileError,
    ConflictError,
    InvalidModelIdError,
    MalformedCatalogError,
    SyncError,
    UnreachableError,
    UsageError,
)
from lgos_model_sync.sync import SyncOptions, SyncResult, apply, plan_sync, sync

__all__ = [
    "CatalogError",
    "CatalogHTTPError",
    "ConfigFileError",
    "ConflictError",
    "Deployment",
    "InvalidModelIdError",
    "MalformedCatalogError",
    "SyncError",
    "SyncOptions",
    "SyncResult",
    "UnreachableError",
    "UsageError",
    "apply",
    "parse_deployment",
    "plan_sync",
    "sync",
]
