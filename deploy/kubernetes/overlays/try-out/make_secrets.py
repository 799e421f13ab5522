"""Write the try-out overlay's secrets: fresh random values, never committed.

    python3 deploy/kubernetes/overlays/try-out/make_secrets.py [--force]

Writes ``secrets/*.env`` beside this file (git ignores the folder), one file
per Secret the overlay's ``secretGenerator`` makes. Existing files are kept
unless ``--force``: applying again must not change the database password
PostgreSQL was initialised with. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
POSTGRES_USER = "lgos"
POSTGRES_DB = "lgos"
MINIO_USER = "lgos-minio"
FILES_BUCKET = "lgos-files"
API_PRINCIPAL = "gateway"
# The Files API's owner of the graphs' key is the API key's tenant: a batch
# created with the API key reads its input as, and writes its results for,
# that tenant.
FILES_OWNER = API_PRINCIPAL


def _token() -> str:
    # Letters and digits only: some values end up inside URLs.
    return secrets.token_hex(24)


def secret_files() -> dict[str, dict[str, str]]:
    """Each env file's name and its ``key=value`` pairs, freshly generated."""
    postgres_password = _token()
    minio_password = _token()
    api_key = f"sk-lgos-{_token()}"
    files_key = f"sk-lgos-files-{_token()}"
    service_key = f"sk-lgos-files-service-{_token()}"
    return {
        "database.env": {
            "url": f"postgresql://{POSTGRES_USER}:{postgres_password}"
            f"@lgos-postgres:5432/{POSTGRES_DB}",
        },
        "postgres.env": {
            "user": POSTGRES_USER,
            "password": postgres_password,
            "database": POSTGRES_DB,
        },
        "api.env": {
            "api-keys": json.dumps({api_key: API_PRINCIPAL}),
            "client-key": api_key,
        },
        "files.env": {
            "api-keys": json.dumps({files_key: FILES_OWNER}),
            "client-key": files_key,
            "service-keys": json.dumps([service_key]),
            "service-key": service_key,
        },
        "files-s3.env": {
            "endpoint": "http://lgos-minio:9000",
            "bucket": FILES_BUCKET,
            "access-key": MINIO_USER,
            "secret-key": minio_password,
        },
        "minio.env": {"root-user": MINIO_USER, "root-password": minio_password},
        # LiteLLM takes keys starting with "sk-" as keys, others as hashes.
        "litellm.env": {"master-key": f"sk-{_token()}"},
    }


def write_secrets(folder: Path, *, force: bool = False) -> bool:
    """Write every file into ``folder``; ``False`` when they exist already."""
    files = secret_files()
    present = sorted(name for name in files if (folder / name).exists())
    if present and not force:
        if len(present) == len(files):
            return False
        # The files share values (the database password is in two of them):
        # completing a partial set would break that.
        raise SystemExit(
            f"make_secrets: {folder} has only {', '.join(present)}; "
            "pass --force to replace them all"
        )
    folder.mkdir(mode=0o700, exist_ok=True)
    for name, values in files.items():
        path = folder / name
        partial = path.with_suffix(".partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.writelines(f"{key}={value}\n" for key, value in values.items())
        partial.replace(path)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="replace existing secrets")
    parser.add_argument(
        "--dir", type=Path, default=HERE / "secrets", help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if write_secrets(args.dir, force=args.force):
        sys.stdout.write(f"make_secrets: wrote new secrets into {args.dir}\n")
    else:
        sys.stdout.write(f"make_secrets: {args.dir} has them already (--force)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
