"""``lgos-model-sync``: flags and environment in, messages and exit codes out.

Exit codes: 0 the file is (now) up to date; 1 ``--check`` found it out of
date; 2 bad usage or bad input (nothing was written).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from lgos_model_sync.deployments import parse_deployments, split_specs
from lgos_model_sync.entries import DEFAULT_OWNER
from lgos_model_sync.errors import SyncError, UsageError
from lgos_model_sync.sync import SyncOptions, SyncResult, apply, plan_sync

EXIT_OK = 0
EXIT_OUT_OF_DATE = 1
EXIT_ERROR = 2

_PROG = "lgos-model-sync"
_ENV_CONFIG = "LGOS_MODEL_SYNC_CONFIG"
_ENV_DEPLOYMENTS = "LGOS_MODEL_SYNC_DEPLOYMENTS"
_ENV_OWNER = "LGOS_MODEL_SYNC_OWNER"
_ENV_TIMEOUT = "LGOS_MODEL_SYNC_TIMEOUT"


def _parser(environ: Mapping[str, str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Write LiteLLM's model list from LGOS deployments' /v1/models, "
        "with each graph's complete lgos details in model_info.",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=environ.get(_ENV_CONFIG),
        help=f"LiteLLM's config YAML to update (env {_ENV_CONFIG})",
    )
    parser.add_argument(
        "--deployment",
        action="append",
        default=[],
        metavar="NAME=PREFIX,URL[,KEY_ENV]",
        help="an LGOS deployment; repeat for several (default: env "
        f"{_ENV_DEPLOYMENTS}, specs separated by ';' or whitespace)",
    )
    parser.add_argument(
        "--owner",
        default=environ.get(_ENV_OWNER, DEFAULT_OWNER),
        help="this sync's id in model_info.lgos_sync.owner; entries with "
        f"another owner are never changed (env {_ENV_OWNER}, default "
        f"{DEFAULT_OWNER})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"seconds per HTTP request (env {_ENV_TIMEOUT}, default 10)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--dry-run", action="store_true", help="print the diff, write nothing"
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when the file is out of date",
    )
    return parser


def _options(args: argparse.Namespace, environ: Mapping[str, str]) -> SyncOptions:
    if args.config is None:
        raise UsageError(f"no configuration file: pass --config or set {_ENV_CONFIG}")
    specs = args.deployment or split_specs(environ.get(_ENV_DEPLOYMENTS, ""))
    owner = str(args.owner).strip()
    if not owner:
        raise UsageError("the owner id must not be empty")
    timeout = args.timeout
    if timeout is None:
        raw = environ.get(_ENV_TIMEOUT, "10")
        try:
            timeout = float(raw)
        except ValueError:
            raise UsageError(f"{_ENV_TIMEOUT}={raw!r} is not a number") from None
    if timeout <= 0:
        raise UsageError("the timeout must be positive")
    return SyncOptions(
        config_path=Path(args.config),
        deployments=parse_deployments(specs),
        owner=owner,
        timeout=timeout,
    )


def run(
    argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """The command, with its inputs and outputs as parameters (for tests)."""
    env = os.environ if environ is None else environ
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    args = _parser(env).parse_args(argv)
    try:
        options = _options(args, env)
        result = plan_sync(options, env)
        if args.dry_run:
            out.write(result.diff())
            out.write(_report(result, "would change" if result.changed else None))
            return EXIT_OK
        if args.check:
            if result.changed:
                err.write(_report(result, "is out of date"))
                return EXIT_OUT_OF_DATE
            out.write(_report(result, None))
            return EXIT_OK
        written = apply(result)
    except SyncError as exc:
        err.write(
            f"{_PROG}: error: {exc}\n{_PROG}: the configuration was not changed\n"
        )
        return EXIT_ERROR
    out.write(_report(result, "wrote" if written else None))
    return EXIT_OK


def _report(result: SyncResult, verb: str | None) -> str:
    if verb is None:
        return f"{_PROG}: {result.path} is up to date ({result.plan.summary()})\n"
    detail = result.plan.summary()
    if not result.plan.has_entry_changes:
        detail += "; layout normalized"
    return f"{_PROG}: {result.path} {verb}: {detail}\n"


def main() -> None:
    """Console entry point."""
    sys.exit(run())
