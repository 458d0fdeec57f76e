#!/usr/bin/env bash
# Tests the TypeScript client against a real `wfd serve`: installs the
# dependencies if they are missing, builds the package and the tests, and
# runs them with node's test runner. Each test file starts its own server
# (on a free port, with a fresh data directory) from $WFD_BIN, which this
# script builds from the repository when it is not set.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund
fi

npm run --silent build
npm run --silent build:test

if [ -z "${WFD_BIN:-}" ]; then
  bindir="$(mktemp -d)"
  trap 'rm -rf "$bindir"' EXIT
  (cd ../.. && go build -o "$bindir/wfd" ./cmd/wfd)
  export WFD_BIN="$bindir/wfd"
fi

# A test that follows a stream waits for its record as long as it takes; one
# whose record never comes would hang the run. The runner's timeout (on
# each file, and each test) fails it instead, far above what a file takes
# even on a crowded machine (10 minutes, go test's default).
node --test --test-concurrency=1 --test-timeout=600000 build/test/*.test.js
