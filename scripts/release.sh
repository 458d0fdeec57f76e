#!/usr/bin/env bash
# Builds what a release publishes, into one directory (default
# dist/release, which git ignores):
#
#   wfd-linux-amd64, wfd-linux-arm64, wfd-darwin-amd64, wfd-darwin-arm64
#       static binaries (CGO_ENABLED=0, -trimpath); `wfd version` prints
#       VERSION, the commit and its time (linked in with -X, as in the
#       Docker image, whether or not Go records the checkout: GOFLAGS may
#       say -buildvcs=false)
#   wfd_client-X.Y.Z-py3-none-any.whl, wfd_client-X.Y.Z.tar.gz
#       the Python client (clients/python), built with `python -m build`
#   wfd-client-X.Y.Z.tgz
#       the TypeScript client (clients/ts), from `npm pack`
#   SHA256SUMS
#       of all of them (check with `sha256sum -c SHA256SUMS` there)
#
# Publishing is then one upload away: the binaries and SHA256SUMS to the
# release page, `twine upload` the wheel and sdist, `npm publish` the
# tarball. scripts/release-check.sh installs each into a clean directory
# and runs an example against a real `wfd serve`.
#
#   scripts/release.sh [OUTDIR]
#
# VERSION is WFD_VERSION, else `git describe --tags --always --dirty`. The
# Python build tool (build, pinned as in clients/python's test extra) goes
# into a throwaway virtualenv and fetches its backend from PyPI; the
# TypeScript client's dependencies are installed with `npm ci` when
# missing. Timestamps inside the Python and npm archives are the commit's
# (SOURCE_DATE_EPOCH).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

out="${1:-dist/release}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# A stale artifact of an earlier run must not ship, nor be summed.
rm -f "$out"/wfd-* "$out"/wfd_client-* "$out"/SHA256SUMS

version="${WFD_VERSION:-$(git describe --tags --always --dirty)}"
commit="$(git rev-parse HEAD)"
commit_time="$(git log -1 --format=%cI)"
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)"
export SOURCE_DATE_EPOCH
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "release $version into $out"

# The server and command line: one static binary per platform.
for platform in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
  goos="${platform%/*}" goarch="${platform#*/}"
  echo "== wfd $goos/$goarch"
  CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/wfd-dev/wfd/cli.linkVersion=$version -X github.com/wfd-dev/wfd/cli.linkRevision=$commit -X github.com/wfd-dev/wfd/cli.linkTime=$commit_time" \
    -o "$out/wfd-$goos-$goarch" ./cmd/wfd
done

# The Python client: sdist and wheel.
echo "== Python client"
python3 -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip install -q --disable-pip-version-check build==1.6.1
"$work/build-venv/bin/python" -m build --sdist --wheel --outdir "$work/python" clients/python >"$work/python-build.log" 2>&1 ||
  { cat "$work/python-build.log" >&2; exit 1; }
cp "$work"/python/wfd_client-*.whl "$work"/python/wfd_client-*.tar.gz "$out/"

# The TypeScript client: npm pack builds it (prepack) into a tarball.
echo "== TypeScript client"
if [ ! -f clients/ts/node_modules/.package-lock.json ] || [ clients/ts/package-lock.json -nt clients/ts/node_modules/.package-lock.json ]; then
  npm --prefix clients/ts ci --no-audit --no-fund
fi
(cd clients/ts && npm pack --silent --pack-destination "$out" >/dev/null)

(cd "$out" && sha256sum wfd-* wfd_client-* >SHA256SUMS)
echo "== $out"
(cd "$out" && ls -l)
