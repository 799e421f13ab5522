"""``lgos-demo-stack``: start the demo stack; Ctrl+C stops it.

``uv run just up`` runs this. It checks the configuration, starts every
service in dependency order, prints the URLs once all are healthy, writes
``{state_dir}/stack.json`` while running (see ``state.py``) and keeps logs in
``{state_dir}/logs/``. While it runs, a service that exits is started again
after a back-off, and given up on (loudly) after repeated crashes; the
``--restart-*`` flags set the policy (``restarts.py``).
``lgos-demo-stack down|status|logs|restart|sync-models`` act on a running
stack through that file and the mailbox (see ``control.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from lgos_stack import mailbox
from lgos_stack.control import CONTROL_COMMANDS, run_control
from lgos_stack.gateway import ConfigError
from lgos_stack.net import port_in_use
from lgos_stack.preflight import configuration_problems
from lgos_stack.restarts import RestartPolicy
from lgos_stack.services import (
    OPTIONAL,
    PORT_FLAGS,
    StackOptions,
    plan_stack,
)
from lgos_stack.signals import Interrupted, StopSignals
from lgos_stack.state import (
    NotRunning,
    is_stack_supervisor,
    read_state,
    stack_state,
    state_file,
    write_state,
)
from lgos_stack.supervisor import Service, StackError, Supervisor


def _default_tools_dir() -> Path:
    """``.tools`` in the working directory, else in the source checkout."""
    here = Path(".tools")
    if here.is_dir():
        return here
    checkout = Path(__file__).resolve().parents[4] / ".tools"
    return checkout if checkout.is_dir() else here


def _options(argv: list[str] | None) -> tuple[StackOptions, float, RestartPolicy]:
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
    parser.add_argument("--prometheus-port", type=int, default=defaults.prometheus_port)
    parser.add_argument(
        "--worker-health-port",
        type=int,
        default=defaults.worker_health_port,
        help="where the background worker serves /health/* and /metrics",
    )
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
    policy = RestartPolicy()
    parser.add_argument(
        "--restart-backoff",
        type=float,
        default=policy.backoff,
        help="seconds before restarting a crashed service; doubles with each "
        "crash in the window (default: %(default)s)",
    )
    parser.add_argument("--restart-backoff-max", type=float, default=policy.backoff_max)
    parser.add_argument(
        "--max-restarts",
        type=int,
        default=policy.max_restarts,
        help="crashes tolerated within --restart-window before giving up on "
        "a service (default: %(default)s)",
    )
    parser.add_argument(
        "--restart-window", type=float, default=policy.window, help="seconds"
    )
    args = parser.parse_args(argv)
    try:
        policy = RestartPolicy(
            backoff=args.restart_backoff,
            backoff_max=args.restart_backoff_max,
            max_restarts=args.max_restarts,
            window=args.restart_window,
        )
    except ValueError as exc:
        parser.error(str(exc))
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
        prometheus_port=args.prometheus_port,
        worker_health_port=args.worker_health_port,
        tools_dir=args.tools_dir.resolve(),
        without=frozenset(args.without),
    )
    return options, args.startup_timeout, policy


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in CONTROL_COMMANDS:
        sys.exit(run_control(args))
    options, startup_timeout, policy = _options(args)
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
    _run(options, plan.services, plan.notes, startup_timeout, policy)


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
    policy: RestartPolicy,
) -> None:
    supervisor = Supervisor(
        services,
        options.state_dir / "logs",
        startup_timeout=startup_timeout,
        policy=policy,
        say=_say,
    )
    state = state_file(options.state_dir)

    def record() -> None:
        write_state(state, stack_state(options.state_dir, supervisor))

    _say(
        f"Starting {', '.join(s.name for s in services)} "
        f"(logs: {options.state_dir / 'logs'})"
    )
    failure: str | None = None
    with StopSignals() as signals:
        try:
            supervisor.start()
            record()
            _say(_banner(services, notes))
            while True:
                supervisor.watch(wake=lambda: signals.mail, changed=record)
                signals.mail = False
                for request in mailbox.take(options.state_dir):
                    answer = _carry_out(request, supervisor)
                    record()
                    mailbox.reply(options.state_dir, request, answer)
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


def _carry_out(request: mailbox.Request, supervisor: Supervisor) -> mailbox.Answer:
    """What ``lgos-demo-stack restart`` or ``sync-models`` asked for."""
    if request.action == "sync-models":
        return _sync_models(supervisor)
    name = request.service or ""
    try:
        name = supervisor.find(name).service.name
        _say(f"Restarting {name} (asked for)…")
        supervisor.restart(name)
    except (ValueError, StackError) as exc:
        _say(f"restart {name}: {exc}")
        return mailbox.Answer(ok=False, message=str(exc))
    child = supervisor.find(name)
    _say(f"{name} restarted (pid {child.process.pid}).")
    return mailbox.Answer(
        ok=True,
        message=f"{name} restarted (pid {child.process.pid}, "
        f"restarts {child.restarts})",
    )


def _sync_models(supervisor: Supervisor) -> mailbox.Answer:
    """Re-run the model sync; if it succeeded, restart LiteLLM on its output."""
    names = {child.service.name for child in supervisor.running}
    if "LiteLLM" not in names:
        return mailbox.Answer(ok=False, message="this stack runs without LiteLLM")
    _say("Re-syncing LiteLLM's model list from the demo API…")
    try:
        supervisor.rerun("model sync")
        supervisor.restart("LiteLLM")
    except StackError as exc:
        _say(f"sync-models failed: {exc}")
        return mailbox.Answer(ok=False, message=str(exc))
    _say("Models synced; LiteLLM restarted.")
    return mailbox.Answer(ok=True, message="models synced; LiteLLM restarted")


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
