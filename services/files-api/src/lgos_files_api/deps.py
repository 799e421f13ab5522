"""What each request is handed: the app's services and the caller's owner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from lgos_files_api.auth import KeyRing
from lgos_files_api.catalog import FileCatalog


@dataclass(frozen=True, slots=True)
class Services:
    """Built once per app in its lifespan; handed to routes by dependency."""

    catalog: FileCatalog
    keyring: KeyRing
    max_upload_bytes: int
    clock: Callable[[], float]


def get_services(request: Request) -> Services:
    services = request.state.services
    assert isinstance(services, Services)
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def current_owner(request: Request, services: ServicesDep) -> str:
    """The owner of the bearer key; 401 before any of the body is read."""
    return services.keyring.owner_of(request.headers.get("authorization"))


OwnerDep = Annotated[str, Depends(current_owner)]
