#!/usr/bin/env bash
# Installs the pinned code-generation tools into tools/: buf and
# protoc-gen-es from npm, grpcio-tools into a virtualenv. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/node_modules/.bin/buf ] || [ ! -x tools/node_modules/.bin/protoc-gen-es ]; then
  npm install --prefix tools --no-audit --no-fund
fi
if [ ! -x tools/.venv/bin/python ]; then
  python3 -m venv tools/.venv
fi
tools/.venv/bin/python -m pip install -q --disable-pip-version-check -r tools/requirements.txt
