#!/usr/bin/env bash
# Tests of the Python client (clients/python): makes .venv if missing,
# installs the package with its test extras (editable), and runs pytest
# against a real `wfd serve` (from $WFD_BIN, else built with `go build`).
# Includes building the sdist and wheel and installing the wheel into a
# fresh venv; WFD_SKIP_BUILD=1 skips that. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
