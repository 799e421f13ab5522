#!/usr/bin/env bash
# Install the CRD validators the deploy tests run (deploy/tests/crd_validation:
# @kubernetes-models/keda and @kubernetes-models/prometheus-operator, pinned by
# its package-lock.json) with npm. Idempotent: does nothing when they are
# installed at the locked versions. Node.js comes from Debian's packages when
# the machine has none (as root, or through sudo without a password).
set -euo pipefail
cd "$(dirname "$0")/../deploy/tests/crd_validation"

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
    echo "CRD validators already installed"
    exit 0
fi
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
echo "CRD validators installed into $(pwd)/node_modules"
