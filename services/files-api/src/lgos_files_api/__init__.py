"""LGOS Files API: OpenAI-compatible ``/v1/files`` on any S3-compatible store."""

from lgos_files_api.app import create_app
from lgos_files_api.settings import Settings

__all__ = ["Settings", "create_app"]
