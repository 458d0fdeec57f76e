#!/usr/bin/env bash
# The test command of the README: the Go packages (with the race detector),
# brief fuzzing of the request and payload checks, then the TypeScript and
# Python clients and the web console (in Chromium) against a real
# `wfd serve`, and the release artifacts installed outside the repository
# (scripts/release-check.sh). The client, console and release scripts
# install their npm and PyPI dependencies on first use.
#
# Every suite runs even when an earlier one fails; the summary at the end
# names each failed suite, and the exit status is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=()
failed=()
# suite NAME COMMAND...: runs one suite and records how it ended.
suite() {
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    passed+=("$name")
  else
    echo "== FAILED: $name (exit $?)"
    failed+=("$name")
  fi
}

suite "go vet" go vet ./...
# cmd/wfd's TestNginxGRPCProxy runs deploy/nginx/wfd.conf with Debian's
# nginx (skipped, saying so, where nginx is not installed) and takes 80 s.
suite "go test -race" go test -race -count=1 ./...
# The deployment files (deploy/ is a module of its own): the Kubernetes
# manifests decoded strictly into the API types, and the Dockerfile linted.
suite "deploy (manifests, Dockerfile)" bash -c 'cd deploy && go vet ./... && go test -count=1 ./...'
# The race detector slows the largest server tests ten times, so they run
# scaled down above and at full size here: 10,000 tasks in the inbox over
# released handlers, one publication waking 1,000 released handlers, a
# batch of 100 children.
suite "go test (full-size server tests)" go test -count=1 -run 'TestInbox|TestPublishWakesMany|TestChildWorkflows' ./server

# Brief fuzzing of the decoders and checks that face clients (each target's
# seed corpus also runs in every `go test` above). The budget is a count of
# executions, not a duration: Go 1.26's fuzzer can fail a run whose
# duration ends while a worker is mid-call ("context deadline exceeded",
# go.dev/issue/75804), which a busy machine makes likely.
fuzz() {
  local target=$1 pkg=$2
  go test -run '^$' -fuzz "^$target\$" -fuzztime "${WFD_FUZZTIME:-50000x}" "$pkg"
}
suite "fuzz FuzzPayload" fuzz FuzzPayload ./internal/payload
suite "fuzz FuzzRequestValidation" fuzz FuzzRequestValidation ./server
suite "fuzz FuzzOutput" fuzz FuzzOutput ./server
suite "fuzz FuzzSchema" fuzz FuzzSchema ./internal/schema

# One wfd binary for the client test suites, which start their own servers.
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
if go build -o "$bin/wfd" ./cmd/wfd; then
  export WFD_BIN="$bin/wfd"
  for client in ts python; do
    if [ -x "clients/$client/test.sh" ]; then
      suite "clients/$client" "clients/$client/test.sh"
    fi
  done
  # The web console: its bundle rebuilt and compared with console/dist,
  # then the browser tests in Debian's Chromium against wfd serve.
  suite "console" console/test.sh
else
  failed+=("go build ./cmd/wfd (the client suites did not run)")
fi

# What a release publishes (scripts/release.sh: static binaries for linux
# and darwin on amd64 and arm64, the Python wheel and sdist, the npm
# tarball, SHA256SUMS), each installed into a clean directory outside the
# repository and run against the release's own `wfd serve`.
suite "release artifacts" scripts/release-check.sh

echo
echo "== summary"
for s in "${passed[@]}"; do echo "passed: $s"; done
for s in "${failed[@]}"; do echo "FAILED: $s"; done
echo "suites: ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
