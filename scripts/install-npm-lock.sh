#!/usr/bin/env bash
# Install the npm packages a test folder pins in its package-lock.json, with
# npm ci (exact versions, no install scripts): used by install-crd-validators.sh
# and install-js-clients.sh. Idempotent: does nothing when the folder's
# node_modules already holds the locked versions. Node.js comes from Debian's
# packages when the machine has none (as root, or through sudo without a
# password).
#
#   scripts/install-npm-lock.sh FOLDER "what it installs"
set -euo pipefail
folder=$1
what=$2
cd "$(dirname "$0")/../$folder"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    if [[ "$(id -u)" == "0" ]]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "Node.js is missing. Install Debian's packages, then run again:" >&2
        echo "    sudo apt-get update && sudo apt-get install -y nodejs npm" >&2
        exit 1
    fi
    echo "installing Debian's nodejs and npm packages"
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -q
    "${as_root[@]}" apt-get install -y -q --no-install-recommends nodejs npm
fi

# npm keeps a copy of the lock it installed from: equal means up to date.
if [[ -f node_modules/.package-lock.json ]] \
    && node -e '
        const a = require("./package-lock.json").packages;
        const b = require("./node_modules/.package-lock.json").packages;
        for (const [k, v] of Object.entries(a)) {
            if (k && (!b[k] || b[k].version !== v.version)) process.exit(1);
        }'; then
    echo "$what already installed"
    exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
echo "$what installed into $(pwd)/node_modules"
