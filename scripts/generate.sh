#!/usr/bin/env bash
# Regenerates gen/ (Go), clients/ts/src/gen and clients/python/gen from
# proto/ with the pinned buf and plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh
export PATH="$PWD/tools/node_modules/.bin:$PATH"
buf format -w
buf generate
