#!/usr/bin/env bash
# Release artifacts by one command (docs/development.md, "Releases"):
#
#   bash scripts/dist.sh            all six platforms: linux, darwin, windows × amd64, arm64
#   DIST_PLATFORMS="linux/amd64" bash scripts/dist.sh     only these (CI's quick path)
#   DIST_DIR=/tmp/out bash scripts/dist.sh                 somewhere else than dist/
#
# writes under dist/ (and nothing else):
#   retrylab_VERSION_OS_ARCH.tar.gz (.zip for windows)  the binary, README.md
#   retrylab-PYVERSION-py3-none-PLATFORM.whl           a platform wheel per binary (python/)
#   npm/retrylab-VERSION.tgz, npm/retrylab-OS-ARCH-VERSION.tgz   the npm packages (npm/)
#   SHA256SUMS                                         sha256sum -c format, every file above
#
# Plain `go build`, not GoReleaser: the binaries need nothing but the Go
# toolchain the repository already pins (go.mod), so there is no further
# tool to pin, download and keep up to date, and every step below is a
# command one can rerun by hand. The artifacts are reproducible: the same
# commit and Go version give the same bytes (CGO_ENABLED=0, -trimpath,
# -ldflags "-s -w -buildid=" plus the version -X values below, archive entries sorted with their mtime set to
# SOURCE_DATE_EPOCH — the last commit's time — and owner 0, gzip without a
# name or time); .ci/dist.sh builds twice and compares SHA256SUMS.
#
# The version: VERSION if set (without a leading v), else the tag at HEAD
# (vX.Y.Z), else 0.0.0-dev.EPOCH (0.0.0.devEPOCH for Python). The binary
# itself prints what the go command stamped (retrylab version: the commit,
# its time, modified).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:-} -mod=readonly"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
export TZ=UTC LC_ALL=C

version="${VERSION:-}"
if [ -z "$version" ]; then
  tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null || true)
  if [ -n "$tag" ]; then version="${tag#v}"; else version="0.0.0-dev.$SOURCE_DATE_EPOCH"; fi
fi
version="${version#v}"
case "$version" in
  *[!0-9A-Za-z.+-]*|"") echo "dist.sh: bad version $version (want X.Y.Z or X.Y.Z-pre)" >&2; exit 2 ;;
esac
# PEP 440: 1.2.3-rc.1 -> 1.2.3rc1, 0.0.0-dev.N -> 0.0.0.devN.
pyversion=$(python3 -c 'import re,sys
v=sys.argv[1]
m=re.fullmatch(r"(\d+\.\d+\.\d+)(?:-(dev|rc|alpha|beta|a|b)\.?(\d+))?",v)
if not m: sys.exit("dist.sh: no PEP 440 form for version "+v)
base,pre,n=m.groups()
print(base if not pre else base+{"dev":".dev","rc":"rc","alpha":"a","beta":"b","a":"a","b":"b"}[pre]+n)' "$version")

# The go command stamps the VCS state itself (retrylab version reads it),
# except in a git worktree (.git is a file there) or a source tarball: the
# same values go in with -X too, and what the go command stamped wins.
revision=$(git rev-parse HEAD)
committed=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd)
modified=false; [ -z "$(git status --porcelain)" ] || modified=true
ldflags="-s -w -buildid= -X main.releaseVersion=$version -X main.vcsRevision=$revision -X main.vcsTime=$committed -X main.vcsModified=$modified"

platforms="${DIST_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
# DIST_DIR: another output folder (.ci/dist.sh builds into temporary ones).
out="${DIST_DIR:-dist}"
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/SHA256SUMS" ] && [ ! -d "$out/.build" ]; then
  echo "dist.sh: $out holds files that are not a previous dist.sh output: not removing them (set DIST_DIR)" >&2
  exit 2
fi
rm -rf "$out"
mkdir -p "$out/.build" "$out/npm"
out=$(cd "$out" && pwd)
build="$out/.build"

echo "dist: retrylab $version (python $pyversion), commit ${revision:0:12} (modified: $modified), SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"
for p in $platforms; do
  os=${p%/*}; arch=${p#*/}
  exe=retrylab; [ "$os" = windows ] && exe=retrylab.exe
  dir="$build/retrylab_${version}_${os}_${arch}"
  mkdir -p "$dir"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -buildvcs=auto -trimpath -ldflags "$ldflags" -o "$dir/$exe" ./cmd/retrylab
  cp README.md "$dir/"
  name=$(basename "$dir")
  if [ "$os" = windows ]; then
    python3 scripts/zipdir.py "$dir" "$out/$name.zip"
  else
    tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
      --mode='u+rwX,go+rX,go-w' -C "$build" -cf - "$name" | gzip -9 -n >"$out/$name.tar.gz"
  fi
  python3 python/build_wheel.py --binary "$dir/$exe" --goos "$os" --goarch "$arch" --version "$pyversion" --out "$out" >/dev/null
  node npm/build.mjs --binary "$dir/$exe" --goos "$os" --goarch "$arch" --version "$version" --out "$build/npm"
  echo "  $os/$arch"
done
node npm/build.mjs --main --version "$version" --out "$build/npm"
# npm pack writes reproducible tarballs (fixed mtimes, sorted entries).
for pkg in "$build"/npm/*/; do
  (cd "$out/npm" && npm pack --silent --ignore-scripts "$pkg" >/dev/null)
done
rm -rf "$build"
(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort | xargs sha256sum >SHA256SUMS)
echo "dist: $(wc -l <"$out/SHA256SUMS") files, SHA256SUMS:"
cat "$out/SHA256SUMS"
