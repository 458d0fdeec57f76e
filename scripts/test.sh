#!/usr/bin/env bash
# The test command of the README: everything CI checks about the code.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...
echo "== go test -race"
go test -race -count=1 ./...
