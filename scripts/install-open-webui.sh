#!/usr/bin/env bash
# Create Open WebUI's isolated tool environment at .tools/open-webui.
#
# Open WebUI pins about ninety exact versions (torch among them), so it stays
# out of the workspace lock in a venv of its own. Idempotent: when the venv
# already holds this version the script does nothing.
# Usage: bash scripts/install-open-webui.sh
set -euo pipefail

OPEN_WEBUI_VERSION="0.12.4"
# The CPU build of torch. Without pinning it first uv resolves a CUDA build of
# several GB. These machines keep the CPU wheel in pip's find-links folder
# (PIP_FIND_LINKS, which uv does not read); elsewhere PyTorch's CPU index has it.
TORCH_VERSION="2.13.0+cpu"
TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${LGOS_OPEN_WEBUI_VENV:-$root/.tools/open-webui}"
uv="${UV:-uv}"

installed_version() {
    "$venv/bin/python" -c \
        'import importlib.metadata as m; print(m.version("open-webui"))' 2>/dev/null
}

if [[ -x "$venv/bin/open-webui" && "$(installed_version || true)" == "$OPEN_WEBUI_VERSION" ]]; then
    echo "open-webui $OPEN_WEBUI_VERSION already installed in $venv"
    exit 0
fi

torch_source=()
if [[ -n "${PIP_FIND_LINKS:-}" ]]; then
    for location in $PIP_FIND_LINKS; do
        torch_source+=(--find-links "$location")
    done
else
    torch_source+=(--extra-index-url "$TORCH_CPU_INDEX" --index-strategy unsafe-best-match)
fi

echo "installing open-webui==$OPEN_WEBUI_VERSION (CPU torch $TORCH_VERSION) into $venv"
# Open WebUI supports Python < 3.13.
"$uv" venv --quiet --allow-existing --python ">=3.11,<3.13" "$venv"
# PYTHONDONTWRITEBYTECODE=1 is set on these machines: compile bytecode now or
# Open WebUI recompiles on every start.
UV_COMPILE_BYTECODE=1 VIRTUAL_ENV="$venv" \
    "$uv" pip install --quiet --python "$venv/bin/python" "${torch_source[@]}" \
    "torch==$TORCH_VERSION" "open-webui==$OPEN_WEBUI_VERSION"
echo "open-webui $(installed_version) installed in $venv"
