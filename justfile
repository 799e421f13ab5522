# Every task a person runs. `uv run just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Workspace members that carry tests (each has its own tests/ folder).
members := "packages/langgraph-openai-serve services/files-api services/model-sync services/chainlit-ui demos bench docs"

# uv sets UV to its own path in `uv run`; fall back to the one on PATH.
uv := env("UV", "uv")

default:
    @just --list

# Start every demo process natively; the demo API on http://127.0.0.1:8000/v1. Ctrl+C stops all
up host="127.0.0.1" port="8000":
    {{uv}} sync --frozen
    {{uv}} run --frozen lgos-demo-stack --host {{host}} --port {{port}} --state-dir .state

# Lint, type-check, build the docs, then run every member's tests
test: lint docs tools
    #!/usr/bin/env bash
    set -euo pipefail
    for member in {{members}}; do
        echo "== tests: $member"
        {{uv}} run --frozen pytest "$member/tests" -q
    done

# ruff (lint + format check) and mypy
lint:
    {{uv}} run --frozen ruff check .
    {{uv}} run --frozen ruff format --check .
    {{uv}} run --frozen mypy packages/langgraph-openai-serve/src services/files-api/src \
        services/model-sync/src services/chainlit-ui/src demos/src bench/src docs/samples

# Format and auto-fix
fmt:
    {{uv}} run --frozen ruff format .
    {{uv}} run --frozen ruff check --fix .

# Isolated tool environments the tests start (LiteLLM, pinned, outside the lock)
tools:
    UV={{uv}} bash scripts/install-litellm.sh

# LGOS against a hand-written baseline; writes bench/results/<timestamp>-<mode>.{md,json}
bench *args:
    {{uv}} run --frozen lgos-bench --profile {{args}}

# Build the documentation site into site/ (strict: a broken link or reference fails)
docs:
    NO_MKDOCS_2_WARNING=1 {{uv}} run --frozen mkdocs build --strict
