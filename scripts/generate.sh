#!/usr/bin/env bash
# Regenerates gen/ from proto/ with the pinned buf and plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x tools/node_modules/.bin/buf ] || npm install --prefix tools --no-audit --no-fund
export PATH="$PWD/tools/node_modules/.bin:$PATH"
buf format -w
buf generate
