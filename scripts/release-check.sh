#!/usr/bin/env bash
# Checks the release artifacts as a user would get them: runs
# scripts/release.sh into a temporary directory, checks SHA256SUMS and the
# binaries' build settings, then, all outside the repository:
#
#   - runs the host's binary's `version`, which must name this commit;
#   - starts it as `wfd serve` on a free loopback port with a fresh bbolt
#     store (stopped when the script exits);
#   - pip installs the wheel into a new virtualenv and runs
#     examples/python/approval.py against that server;
#   - npm installs the tarball into an empty directory and runs
#     examples/ts/approval.mjs against it.
#
# scripts/test.sh runs it as one suite. The first run cross-compiles four
# binaries (minutes); later runs take Go's build cache (well under two
# minutes). WFD_RELEASE_DIR keeps the artifacts there instead of a
# temporary directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

tmp="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "release-check: $*" >&2
  exit 1
}

dist="${WFD_RELEASE_DIR:-$tmp/dist}"
scripts/release.sh "$dist"
commit="$(git rev-parse HEAD)"
version="${WFD_VERSION:-$(git describe --tags --always --dirty)}"

echo "== checksums and binaries"
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  goos="${platform%/*}" goarch="${platform#*/}"
  bin="$dist/wfd-$goos-$goarch"
  [ -x "$bin" ] || fail "no $bin"
  grep -q " wfd-$goos-$goarch\$" "$dist/SHA256SUMS" || fail "SHA256SUMS lacks wfd-$goos-$goarch"
  info="$(go version -m "$bin")"
  for setting in CGO_ENABLED=0 "GOOS=$goos" "GOARCH=$goarch" -trimpath=true; do
    grep -qE "^\s+build\s+$setting\$" <<<"$info" || fail "wfd-$goos-$goarch: not built with $setting"
  done
done
for f in "wfd_client-*-py3-none-any.whl" "wfd_client-*.tar.gz" "wfd-client-*.tgz"; do
  compgen -G "$dist/$f" >/dev/null || fail "no $f"
done

host="$dist/wfd-$(go env GOHOSTOS)-$(go env GOHOSTARCH)"
[ -x "$host" ] || fail "no release binary for this machine ($host)"
# Everything below runs outside the repository.
cd "$tmp"

echo "== $host version"
"$host" version
"$host" version --json | python3 -c '
import json, sys
v, commit, version = json.load(sys.stdin), sys.argv[1], sys.argv[2]
if v["revision"] != commit or v["version"] != version or not v["time"]:
    sys.exit(f"wfd version: {v}, want revision {commit} and version {version}")
' "$commit" "$version"

echo "== wfd serve"
"$host" serve --addr 127.0.0.1:0 --console-addr "" --data "$tmp/data" --log-format json 2>"$tmp/serve.log" &
server=$!
addr=""
for _ in $(seq 300); do
  addr="$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("msg") == "listening":
        print(e["addr"])
        break
' "$tmp/serve.log")"
  [ -n "$addr" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$tmp/serve.log" >&2; fail "wfd serve exited"; }
  sleep 0.1
done
[ -n "$addr" ] || { cat "$tmp/serve.log" >&2; fail "wfd serve did not listen within 30 s"; }
echo "listening on $addr"

echo "== Python client: the wheel in a new virtualenv"
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check "$dist"/wfd_client-*-py3-none-any.whl
mkdir "$tmp/py" && cp "$root/examples/python/approval.py" "$tmp/py/"
where="$(cd "$tmp/py" && "$tmp/venv/bin/python" -c 'import wfd_client; print(wfd_client.__file__)')"
case "$where" in "$tmp/venv/"*) ;; *) fail "wfd_client imported from $where, not the virtualenv" ;; esac
out="$(cd "$tmp/py" && env -u PYTHONPATH "$tmp/venv/bin/python" approval.py --addr "$addr")" || { echo "$out"; fail "the Python example failed"; }
echo "$out" | tail -n 2
grep -q '^result: .*"approved": true' <<<"$out" || fail "the Python example printed no approved result"

echo "== TypeScript client: the tarball in an empty directory"
mkdir "$tmp/npm" && cp "$root/examples/ts/approval.mjs" "$tmp/npm/"
(cd "$tmp/npm" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "$dist"/wfd-client-*.tgz >/dev/null)
[ -f "$tmp/npm/node_modules/@wfd/client/dist/node.js" ] || fail "@wfd/client is not installed with its dist/"
out="$(cd "$tmp/npm" && node approval.mjs --addr "$addr")" || { echo "$out"; fail "the TypeScript example failed"; }
echo "$out" | tail -n 2
grep -q '^result: .*"approved":true' <<<"$out" || fail "the TypeScript example printed no approved result"

echo "== release-check: ok ($version)"
