#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the Playwright e2e suite.
#
# Playwright's own browser downloads cannot be fetched here, so the suite
# drives the distribution's `chromium` package through `executable_path`.
# Idempotent: does nothing when `chromium` is already on PATH. Installs with
# apt-get as root, or through sudo when it works without a password;
# otherwise prints the command to run and fails.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    echo "chromium already installed: $(command -v chromium)"
    exit 0
fi

if [[ "$(id -u)" == "0" ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "Chromium is missing. Install Debian's package, then run the suite again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
fi

echo "installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends chromium
echo "chromium installed: $(command -v chromium)"
