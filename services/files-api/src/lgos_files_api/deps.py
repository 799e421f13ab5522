"""What each request is handed: the app's services and the caller's owner."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from lgos_files_api.auth import OWNER_HEADER, Caller, KeyRing
from lgos_files_api.catalog import FileCatalog
from lgos_files_api.slots import UploadSlots


@dataclass(frozen=True, slots=True)
class Services:
    """Built once per app in its lifespan; handed to routes by dependency."""

    catalog: FileCatalog
    keyring: KeyRing
    max_upload_bytes: int
    clock: Callable[[], float]
    uploads: UploadSlots
    upload_idle_timeout: float


def get_services(request: Request) -> Services:
    services = request.state.services
    assert isinstance(services, Services)
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def current_caller(request: Request, services: ServicesDep) -> Caller:
    """Who calls, for which owner; 401 before any of the body is read."""
    headers = request.headers
    return services.keyring.caller(
        headers.get("authorization"), headers.get(OWNER_HEADER)
    )


CallerDep = Annotated[Caller, Depends(current_caller)]


def current_owner(caller: CallerDep) -> str:
    """The owner the caller acts for."""
    return caller.owner


OwnerDep = Annotated[str, Depends(current_owner)]
