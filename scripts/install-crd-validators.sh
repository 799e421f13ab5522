#!/usr/bin/env bash
# Install the CRD validators the deploy tests run (deploy/tests/crd_validation:
# @kubernetes-models/keda and @kubernetes-models/prometheus-operator, pinned by
# its package-lock.json) with npm ci; see install-npm-lock.sh.
set -euo pipefail
exec bash "$(dirname "$0")/install-npm-lock.sh" deploy/tests/crd_validation "CRD validators"
