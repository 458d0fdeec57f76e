#!/usr/bin/env bash
# Installs the pinned tools into tools/: buf and protoc-gen-es from npm,
# grpcio-tools into a virtualenv, golangci-lint from the Go module proxy
# into tools/bin. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/node_modules/.bin/buf ] || [ ! -x tools/node_modules/.bin/protoc-gen-es ]; then
  npm ci --prefix tools --no-audit --no-fund
fi
if [ ! -x tools/.venv/bin/python ]; then
  python3 -m venv tools/.venv
fi
tools/.venv/bin/python -m pip install -q --disable-pip-version-check -r tools/requirements.txt

# golangci-lint: built from source at an exact version (go install
# module@version keeps its dependencies out of the project's go.mod). The
# first build takes a few minutes; later runs skip it.
golangci_lint_version=2.15.0
if ! tools/bin/golangci-lint version 2>/dev/null | grep -q "version $golangci_lint_version "; then
  GOBIN="$PWD/tools/bin" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v$golangci_lint_version"
fi
