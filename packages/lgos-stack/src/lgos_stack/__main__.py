"""``lgos-demo-stack``: start the demo stack; Ctrl+C stops it.

``uv run just up`` runs this. It checks the configuration, starts every
service in dependency order, prints the URLs once all are healthy, writes
``{state_dir}/stack.json`` while running (see ``state.py``) and keeps logs in
``{state_dir}/logs/``. ``lgos-demo-stack down|status|logs|sync-models``
act on a running stack through that file (see ``control.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lgos_stack.control import CONTROL_COMMANDS, run_control
from lgos_stack.gateway import ConfigError
from lgos_stack.net import port_in_use
from lgos_stack.preflight import configuration_problems
from lgos_stack.services import (
    OPTIONAL,
    PORT_FLAGS,
    StackOptions,
    plan_stack,
)
from lgos_stack.state import (
    SYNC_RESULT,
    NotRunning,
    is_stack_supervisor,
    read_state,
    stack_state,
    state_file,
)
from lgos_stack.supervisor import (
    Interrupted,
    Service,
    StackError,
    StopSignals,
    Supervisor,
    write_state,
)


def _default_tools_dir() -> Path:
    """``.tools`` in the working directory, else in the source checkout."""
    here = Path(".tools")
    if here.is_dir():
        return here
    checkout = Path(__file__).resolve().parents[4] / ".tools"
    return checkout if checkout.is_dir() else here


def _options(argv: list[str] | None) -> tuple[StackOptions, float]:
    defaults = StackOptions(state_dir=Path(".state"))
    parser = argparse.ArgumentParser(
        prog="lgos-demo-stack",
        description="Start the LGOS demo stack (demo model, search, SeaweedFS, "
        "Files API, PostgreSQL, background worker, demo API, model sync, "
        "LiteLLM, Chainlit, Open WebUI) as native processes. Ctrl+C stops it. "
        f"Also: lgos-demo-stack {{{','.join(CONTROL_COMMANDS)}}} --help.",
    )
    parser.add_argument("--host", default=defaults.host, help="host of the servers")
    parser.add_argument("--port", type=int, default=defaults.port, help="demo API port")
    parser.add_argument("--model-port", type=int, default=defaults.model_port)
    parser.add_argument("--search-port", type=int, default=defaults.search_port)
    parser.add_argument("--files-port", type=int, default=defaults.files_port)
    parser.add_argument("--s3-port", type=int, default=defaults.s3_port)
    parser.add_argument("--postgres-port", type=int, default=defaults.postgres_port)
    parser.add_argument("--litellm-port", type=int, default=defaults.litellm_port)
    parser.add_argument("--chainlit-port", type=int, default=defaults.chainlit_port)
    parser.add_argument("--open-webui-port", type=int, default=defaults.open_webui_port)
    parser.add_argument("--state-dir", type=Path, default=defaults.state_dir)
    parser.add_argument(
        "--postgres-dir",
        type=Path,
        help="PostgreSQL cluster folder (default: STATE_DIR/postgres)",
    )
    parser.add_argument(
        "--tools-dir",
        type=Path,
        default=_default_tools_dir(),
        help="where the litellm/ and open-webui/ tool environments are "
        "(default: ./.tools)",
    )
    parser.add_argument(
        "--without",
        action="append",
        choices=OPTIONAL,
        default=[],
        help="leave a service out (repeatable); without litellm the model "
        "sync and both UIs are left out too",
    )
    parser.add_argument("--startup-timeout", type=float, default=180)
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
        litellm_port=args.litellm_port,
        chainlit_port=args.chainlit_port,
        open_webui_port=args.open_webui_port,
        tools_dir=args.tools_dir.resolve(),
        without=frozenset(args.without),
    )
    return options, args.startup_timeout


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in CONTROL_COMMANDS:
        sys.exit(run_control(args))
    options, startup_timeout = _options(args)
    options.state_dir.mkdir(parents=True, exist_ok=True)
    running = _running_supervisor(options.state_dir)
    if running is not None:
        sys.exit(
            f"lgos-demo-stack: a stack already runs for {options.state_dir} "
            f"(supervisor PID {running}): stop it first (`just down`)"
        )
    try:
        plan = plan_stack(options)
    except ConfigError as exc:
        sys.exit(f"lgos-demo-stack: {exc}")
    busy = [
        f"{service.name} (port {service.port}; {PORT_FLAGS[service.name]} moves it)"
        for service in plan.services
        if service.port is not None and port_in_use(service.port, options.host)
    ]
    if busy:
        sys.exit(
            "lgos-demo-stack: ports already in use: "
            + ", ".join(busy)
            + ". Stop what uses them or choose other ports."
        )
    problems = configuration_problems(options, plan.services, os.environ)
    if problems:
        sys.exit(
            "lgos-demo-stack: cannot start:\n" + "\n".join(f"  - {p}" for p in problems)
        )
    _run(options, plan.services, plan.notes, startup_timeout)


def _running_supervisor(state_dir: Path) -> int | None:
    """The PID of a live stack recorded in this state folder, if any."""
    try:
        pid: int = read_state(state_dir)["pid"]
    except NotRunning:
        return None
    return pid if is_stack_supervisor(pid) else None


def _run(
    options: StackOptions,
    services: list[Service],
    notes: list[str],
    startup_timeout: float,
) -> None:
    supervisor = Supervisor(
        services, options.state_dir / "logs", startup_timeout=startup_timeout
    )
    state = state_file(options.state_dir)
    _say(
        f"Starting {', '.join(s.name for s in services)} "
        f"(logs: {options.state_dir / 'logs'})"
    )
    failure: str | None = None
    with StopSignals() as signals:
        try:
            supervisor.start()
            write_state(state, stack_state(options.state_dir, supervisor))
            _say(_banner(services, notes))
            while True:
                supervisor.watch(wake=lambda: signals.reload_requested)
                signals.reload_requested = False
                _sync_models(options, supervisor)
        except Interrupted:
            _say("\nStopping the demo stack…")
        except StackError as exc:
            failure = str(exc)
        finally:
            signals.disarm()
            supervisor.stop()
            state.unlink(missing_ok=True)
    if failure is not None:
        sys.exit(f"lgos-demo-stack: {failure}")
    _say("Stopped.")


def _sync_models(options: StackOptions, supervisor: Supervisor) -> None:
    """Re-run the model sync; if it succeeded, restart LiteLLM on its output.

    The outcome goes to ``{state_dir}/sync-models.json`` for the command that
    asked (``lgos-demo-stack sync-models`` sends SIGUSR1 and waits for it)."""
    names = {child.service.name for child in supervisor.running}
    result: dict[str, object]
    if "LiteLLM" not in names:
        result = {"ok": False, "message": "this stack runs without LiteLLM"}
    else:
        _say("Re-syncing LiteLLM's model list from the demo API…")
        try:
            supervisor.rerun("model sync")
            supervisor.restart("LiteLLM")
        except StackError as exc:
            result = {"ok": False, "message": str(exc)}
            _say(f"sync-models failed: {exc}")
        else:
            result = {"ok": True, "message": "models synced; LiteLLM restarted"}
            _say("Models synced; LiteLLM restarted.")
        write_state(
            state_file(options.state_dir), stack_state(options.state_dir, supervisor)
        )
    write_state(options.state_dir / SYNC_RESULT, result)


def _banner(services: Sequence[Service], notes: list[str]) -> str:
    lines = ["", "LGOS demo stack is up:"]
    width = max(len(s.name) for s in services)
    for service in services:
        lines.append(f"  {service.name:<{width}}  {service.url}")
    lines += [f"  note: {note}" for note in notes]
    names = {s.name: s.url for s in services}
    lines.append("")
    if "Chainlit" in names:
        lines.append(f"Chat with the demo graphs: {names['Chainlit']}")
    if "Open WebUI" in names:
        lines.append(f"Or in Open WebUI: {names['Open WebUI']}")
    lines += [f"Try: curl {names['demo API']}/models", "Ctrl+C stops everything."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
