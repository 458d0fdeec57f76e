#!/usr/bin/env bash
# The test command of the README: the Go packages (with the race detector),
# then the TypeScript and Python clients against a real `wfd serve`. The
# client scripts install their npm and PyPI dependencies on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...
echo "== go test -race"
go test -race -count=1 ./...

# One wfd binary for the client test suites, which start their own servers.
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/wfd" ./cmd/wfd
export WFD_BIN="$bin/wfd"

for client in ts python; do
  if [ -x "clients/$client/test.sh" ]; then
    echo "== clients/$client"
    "clients/$client/test.sh"
  fi
done
