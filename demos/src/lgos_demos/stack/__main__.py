"""``lgos-demo-stack``: start the demo stack; Ctrl+C stops it.

``uv run just up`` runs this. It prints the URLs once every service is
healthy, writes ``{state_dir}/stack.json`` (PIDs and URLs) while running,
and keeps logs in ``{state_dir}/logs/``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lgos_demos.stack.services import StackOptions, plan_stack, port_in_use
from lgos_demos.stack.supervisor import (
    Interrupted,
    Service,
    StackError,
    StopSignals,
    Supervisor,
    write_state,
)


def _options(argv: list[str] | None) -> tuple[StackOptions, float]:
    defaults = StackOptions(state_dir=Path(".state"))
    parser = argparse.ArgumentParser(
        description="Start the LGOS demo stack (demo model, search, SeaweedFS, "
        "Files API, PostgreSQL, background worker, demo API) as native "
        "processes. Ctrl+C stops it."
    )
    parser.add_argument("--host", default=defaults.host, help="demo API host")
    parser.add_argument("--port", type=int, default=defaults.port, help="demo API port")
    parser.add_argument("--model-port", type=int, default=defaults.model_port)
    parser.add_argument("--search-port", type=int, default=defaults.search_port)
    parser.add_argument("--files-port", type=int, default=defaults.files_port)
    parser.add_argument("--s3-port", type=int, default=defaults.s3_port)
    parser.add_argument("--postgres-port", type=int, default=defaults.postgres_port)
    parser.add_argument("--state-dir", type=Path, default=defaults.state_dir)
    parser.add_argument(
        "--postgres-dir",
        type=Path,
        help="PostgreSQL cluster folder (default: STATE_DIR/postgres)",
    )
    parser.add_argument("--startup-timeout", type=float, default=90)
    args = parser.parse_args(argv)
    options = StackOptions(
        state_dir=args.state_dir.resolve(),
        host=args.host,
        port=args.port,
        model_port=args.model_port,
        search_port=args.search_port,
        files_port=args.files_port,
        s3_port=args.s3_port,
        postgres_port=args.postgres_port,
        postgres_dir=args.postgres_dir.resolve() if args.postgres_dir else None,
    )
    return options, args.startup_timeout


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    options, startup_timeout = _options(argv)
    options.state_dir.mkdir(parents=True, exist_ok=True)
    plan = plan_stack(options)
    busy = [
        f"{service.name} (port {service.port})"
        for service in plan.services
        if service.port is not None and port_in_use(service.port)
    ]
    if busy:
        sys.exit("lgos-demo-stack: ports already in use: " + ", ".join(busy))
    state_file = options.state_dir / "stack.json"
    supervisor = Supervisor(
        plan.services, options.state_dir / "logs", startup_timeout=startup_timeout
    )
    _say(
        f"Starting {', '.join(s.name for s in plan.services)} "
        f"(logs: {options.state_dir / 'logs'})"
    )
    failure: str | None = None
    with StopSignals() as signals:
        try:
            supervisor.start()
            pids = supervisor.pids()
            services = {
                s.name: {"pid": pids[s.name], "url": s.url} for s in plan.services
            }
            write_state(state_file, {"pid": os.getpid(), "services": services})
            _say(_banner(plan.services, plan.notes))
            supervisor.watch()
        except Interrupted:
            _say("\nStopping the demo stack…")
        except StackError as exc:
            failure = str(exc)
        finally:
            signals.disarm()
            supervisor.stop()
            state_file.unlink(missing_ok=True)
    if failure is not None:
        sys.exit(f"lgos-demo-stack: {failure}")
    _say("Stopped.")


def _banner(services: Sequence[Service], notes: list[str]) -> str:
    lines = ["", "LGOS demo stack is up:"]
    width = max(len(s.name) for s in services)
    for service in services:
        lines.append(f"  {service.name:<{width}}  {service.url}")
    lines += [f"  note: {note}" for note in notes]
    api = next(s.url for s in services if s.name == "demo API")
    lines += ["", f"Try: curl {api}/models", "Ctrl+C stops everything."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
