#!/usr/bin/env bash
# Tests the web console: installs the npm dependencies (npm ci) if they are
# missing, rebuilds dist/ and fails if it differs from what is committed
# (the bundle is generated code: commit what `npm run build` makes), then
# runs the end-to-end tests in Debian's Chromium ($CHROMIUM, default
# /usr/bin/chromium; Playwright downloads no browser) against real
# `wfd serve` processes started from $WFD_BIN, which this script builds
# when it is not set. Screenshots of each page land in test-results/screens.
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

if [ -z "${WFD_BIN:-}" ]; then
  bindir="$(mktemp -d)"
  trap 'rm -rf "$bindir"' EXIT
  (cd .. && go build -o "$bindir/wfd" ./cmd/wfd)
  export WFD_BIN="$bindir/wfd"
fi

npx playwright test "$@"
