#!/usr/bin/env bash
# Regenerates gen/ (Go), clients/ts/src/gen and clients/python/gen from
# the API (proto/, buf.gen.yaml), and internal/gen (Go only) from the
# internal protos (proto/internal, buf.gen.internal.yaml), with the pinned
# buf and plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/tools.sh
export PATH="$PWD/tools/node_modules/.bin:$PATH"
buf format -w
buf format -w proto/internal
buf generate
buf generate --template buf.gen.internal.yaml
