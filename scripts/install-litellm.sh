#!/usr/bin/env bash
# Create LiteLLM's isolated tool environment at .tools/litellm (repo-relative).
#
# LiteLLM pins many exact versions, so it stays out of the workspace lock in a
# venv of its own. Idempotent: when the venv already holds this version the
# script does nothing. Usage: bash scripts/install-litellm.sh
set -euo pipefail

# 1.109 and 1.110 need packages the registry lacks.
LITELLM_VERSION="1.108.7"
# LiteLLM's `prometheus` callback (its /metrics) imports prometheus_client,
# which litellm[proxy] does not pull in; LiteLLM's own image ships it.
PROMETHEUS_CLIENT_VERSION="0.26.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/litellm"
uv="${UV:-uv}"

installed_version() {
    "$venv/bin/python" -c \
        'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null
}

installed_prometheus_client() {
    "$venv/bin/python" -c \
        'import importlib.metadata as m; print(m.version("prometheus-client"))' 2>/dev/null
}

if [[ -x "$venv/bin/litellm" && "$(installed_version || true)" == "$LITELLM_VERSION" \
    && "$(installed_prometheus_client || true)" == "$PROMETHEUS_CLIENT_VERSION" ]]; then
    echo "litellm $LITELLM_VERSION already installed in $venv"
    exit 0
fi

echo "installing litellm[proxy]==$LITELLM_VERSION (and prometheus-client) into $venv"
"$uv" venv --quiet --allow-existing "$venv"
# PYTHONDONTWRITEBYTECODE=1 is set on these machines: without compiled
# bytecode LiteLLM recompiles on every start (about 30 s instead of 16 s).
UV_COMPILE_BYTECODE=1 VIRTUAL_ENV="$venv" \
    "$uv" pip install --quiet --python "$venv/bin/python" \
    "litellm[proxy]==$LITELLM_VERSION" "prometheus-client==$PROMETHEUS_CLIENT_VERSION"
echo "litellm $("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))') installed in $venv"
