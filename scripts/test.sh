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
# The race detector slows the largest server tests ten times, so they run
# scaled down above and at full size here: 10,000 tasks in the inbox over
# released handlers, one publication waking 1,000 released handlers, a
# batch of 100 children.
echo "== go test (full-size server tests)"
go test -count=1 -run 'TestInbox|TestPublishWakesMany|TestChildWorkflows' ./server

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
