#!/usr/bin/env bash
# Tests the web console: installs the npm dependencies (npm ci) if they are
# missing, rebuilds dist/ and fails if it differs from what is committed
# (the bundle is generated code: commit what `npm run build` makes), then
# runs the end-to-end tests in Debian's Chromium ($CHROMIUM, default
# /usr/bin/chromium; Playwright downloads no browser) against real
# `wfd serve` processes started from $WFD_BIN, which this script builds
# when it is not set (and the replica spec on a throwaway PostgreSQL from
# $WFD_PGTEMP_BIN, internal/pgtest/cmd/pgtemp, built likewise; without
# PostgreSQL it skips unless WFD_PGTEST_REQUIRE is set), and the versions
# spec's Go step worker from $WFD_E2E_WORKER_BIN (e2e/worker, built
# likewise). Arguments go to `playwright test` (e.g. a spec's file name).
# Screenshots of
# each page land in test-results/screens.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

npm run --silent build
if ! git diff --exit-code --stat -- dist || [ -n "$(git status --porcelain -- dist)" ]; then
  git status --short -- dist
  echo "console/dist differs from the build of the sources: run console/build.sh and commit dist/" >&2
  exit 1
fi

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "no Chromium at $chromium: apt-get install chromium (or set CHROMIUM)" >&2
  exit 1
fi
export CHROMIUM="$chromium"

bindir="$(mktemp -d)"
trap 'rm -rf "$bindir"' EXIT
if [ -z "${WFD_BIN:-}" ]; then
  (cd .. && go build -o "$bindir/wfd" ./cmd/wfd)
  export WFD_BIN="$bindir/wfd"
fi
# The versions spec's step worker (e2e/worker: two versions of a workflow).
if [ -z "${WFD_E2E_WORKER_BIN:-}" ]; then
  (cd .. && go build -o "$bindir/e2e-worker" ./console/e2e/worker)
  export WFD_E2E_WORKER_BIN="$bindir/e2e-worker"
fi
# The replica spec's PostgreSQL: a throwaway cluster (package pgtest).
if [ -z "${WFD_PGTEMP_BIN:-}" ]; then
  (cd .. && go build -o "$bindir/pgtemp" ./internal/pgtest/cmd/pgtemp)
  export WFD_PGTEMP_BIN="$bindir/pgtemp"
fi

npx playwright test "$@"
