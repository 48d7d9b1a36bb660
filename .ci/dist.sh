#!/usr/bin/env bash
# The distributions as a new user meets them (docs/python.md, docs/npm.md,
# docs/github-action.md), called by .ci/run after the SDK clients are
# installed (testdata/sdk/node's npm ci; the lock files of testdata/python):
#
#   1. scripts/dist.sh for this machine's platform, twice: SHA256SUMS must
#      be the same (reproducible), and the binary's `retrylab version` must
#      name HEAD's commit;
#   2. the wheel, in a fresh venv with only the official openai and
#      anthropic SDKs and pytest (hashed lock files) beside it: the pytest
#      example suite (python/tests) passes, with --retrylab-report writing
#      the run folders and report.html, and its trap fails (exit 1) with
#      the checks' own words;
#   3. the npm tarballs, installed with npm install --offline into a fresh
#      prefix (the main package and this platform's), with the official
#      Node SDKs of testdata/sdk/node: node --test passes the honest
#      example and fails the trap, with the checks' words; npx retrylab runs;
#   4. action.yml and the example workflow parse, with the keys they need
#      (go test -run TestAction ./cmd/retrylab).
#
# Loopback only; no network but the package registries .ci/run already
# uses (none here: pip installs from the lock files, npm is offline).
# DIST_ALL=1 builds all six platforms (the release command) instead of
# this machine's; CI builds one, twice, to stay within its time budget.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$(go env GOPATH)/bin:$PATH"
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

host="$(go env GOOS)/$(go env GOARCH)"
platforms="$host"
[ "${DIST_ALL:-}" = 1 ] && platforms="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"

echo "== dist: bash scripts/dist.sh ($platforms), twice: the same SHA256SUMS"
# Into temporary folders: a dist/ of the developer's is left alone.
DIST_DIR="$tmp/dist1" DIST_PLATFORMS="$platforms" bash scripts/dist.sh >"$tmp/dist1.log" 2>&1 || { cat "$tmp/dist1.log"; exit 1; }
DIST_DIR="$tmp/dist" DIST_PLATFORMS="$platforms" bash scripts/dist.sh >"$tmp/dist2.log" 2>&1 || { cat "$tmp/dist2.log"; exit 1; }
if ! diff -u "$tmp/dist1/SHA256SUMS" "$tmp/dist/SHA256SUMS"; then
  echo "dist: two runs of scripts/dist.sh gave different artifacts (above): not reproducible"
  exit 1
fi
dist="$tmp/dist"
(cd "$dist" && sha256sum -c --quiet SHA256SUMS)
cat "$dist/SHA256SUMS"
goos=${host%/*}; goarch=${host#*/}
archive=$(ls "$dist"/retrylab_*_"${goos}_${goarch}".tar.gz)
tar -xzf "$archive" -C "$tmp"
bin=$(ls "$tmp"/retrylab_*_"${goos}_${goarch}"/retrylab)
"$bin" version | tee "$tmp/version"
grep -qx "commit: $(git rev-parse HEAD)" "$tmp/version" || { echo "dist: retrylab version does not name HEAD $(git rev-parse HEAD)"; exit 1; }
echo "reproducible: $(wc -l <"$dist/SHA256SUMS") files, same SHA256SUMS twice (${SECONDS}s)"

# Every wheel's RECORD lists every other file with its sha256 and size.
python3 - "$dist"/*.whl <<'PY'
import base64, hashlib, sys, zipfile
for w in sys.argv[1:]:
    z = zipfile.ZipFile(w)
    names = z.namelist()
    rec = [n for n in names if n.endswith(".dist-info/RECORD")]
    assert len(rec) == 1, (w, rec)
    seen = set()
    for line in z.read(rec[0]).decode().splitlines():
        path, h, size = line.rsplit(",", 2)
        seen.add(path)
        if path == rec[0]:
            continue
        data = z.read(path)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert h == want and int(size) == len(data), (w, path)
    assert seen == set(names), (w, set(names) ^ seen)
    print("RECORD ok:", w.split("/")[-1])
PY

echo "== dist: the wheel in a fresh venv with the openai and anthropic SDKs and pytest"
py="${PYTHON:-python3}"
"$py" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-compile \
  --require-hashes --no-deps --only-binary=:all: \
  -r testdata/python/sdk/requirements.txt -r python/tests/requirements.txt
wheel=$(ls "$dist"/retrylab-*.whl)
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check --no-input --no-deps "$wheel"
"$tmp/venv/bin/pip" check >/dev/null
"$tmp/venv/bin/retrylab" version | head -1
# Run from a copy outside the repository: the tests find nothing of the
# clone (no scenarios/, no go), only the installed wheel and the SDKs.
cp -r python/tests "$tmp/pytests"
rm -f "$tmp/pytests/requirements."*
(cd "$tmp/pytests" && "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider \
  --retrylab-report "$tmp/pyreport" test_sdk_honest.py) || { echo "dist: the honest pytest suite failed"; exit 1; }
test -s "$tmp/pyreport/report.html" || { echo "dist: --retrylab-report wrote no report.html"; exit 1; }
n=$(ls "$tmp"/pyreport/*/server.jsonl | wc -l)
[ "$n" = 2 ] || { echo "dist: --retrylab-report kept $n run folders, want 2"; ls -R "$tmp/pyreport"; exit 1; }
echo "--retrylab-report: 2 run folders and report.html"
set +e
(cd "$tmp/pytests" && "$tmp/venv/bin/python" -m pytest -q -rN -p no:cacheprovider trap/) >"$tmp/trap.out" 2>&1
rc=$?
set -e
# Each failure's own words at least once per test (-rN: no short summary,
# which repeats them as far as the terminal's width allows).
if [ "$rc" != 1 ] || [ "$(grep -c '^FAIL attempts: want 5, got 3' "$tmp/trap.out")" -lt 2 ] || ! grep -q '2 failed' "$tmp/trap.out"; then
  cat "$tmp/trap.out"
  echo "dist: the pytest trap must fail both tests (exit 1) with 'FAIL attempts: want 5, got 3'; exit $rc"
  exit 1
fi
echo "pytest trap: exit 1, both tests failed with the verdict's words (${SECONDS}s)"
set +e
(cd "$tmp/pytests" && "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider errors/) >"$tmp/errors.out" 2>&1
rc=$?
set -e
if [ "$rc" != 1 ] || ! grep -q 'hint: did you mean attempts?' "$tmp/errors.out"; then
  cat "$tmp/errors.out"
  echo "dist: a misspelt scenario key must fail its test (exit 1) with serve's did-you-mean; exit $rc"
  exit 1
fi
echo "pytest bad input: exit 1 with serve's diagnostic"

echo "== dist: the npm tarballs in a fresh prefix (npm install --offline) with the Node SDKs"
npmos=$goos; [ "$npmos" = windows ] && npmos=win32
npmcpu=$goarch; [ "$npmcpu" = amd64 ] && npmcpu=x64
prefix="$tmp/node"
mkdir -p "$prefix"
echo '{"private": true, "type": "module"}' >"$prefix/package.json"
main_tgz=$(ls "$dist"/npm/retrylab-[0-9]*.tgz)
plat_tgz=$(ls "$dist"/npm/retrylab-"$npmos-$npmcpu"-*.tgz)
# The other platforms' optional packages are not in the registry for a
# dev version, and --offline keeps npm from asking: they are skipped.
npm install --prefix "$prefix" --offline --no-audit --no-fund --ignore-scripts "$main_tgz" "$plat_tgz" >"$tmp/npm.log" 2>&1 || { cat "$tmp/npm.log"; exit 1; }
ls "$prefix/node_modules/@retrylab"
# The official SDKs as .ci/run installed them (testdata/sdk/node).
mkdir -p "$prefix/node_modules/@anthropic-ai"
ln -s "$PWD/testdata/sdk/node/node_modules/openai" "$prefix/node_modules/openai"
ln -s "$PWD/testdata/sdk/node/node_modules/@anthropic-ai/sdk" "$prefix/node_modules/@anthropic-ai/sdk"
cp npm/examples/*.test.mjs "$prefix/"
(cd "$prefix" && npx --offline retrylab version | head -1)
(cd "$prefix" && node --test honest.test.mjs) >"$tmp/node-honest.out" 2>&1 || { cat "$tmp/node-honest.out"; echo "dist: the honest node:test example failed"; exit 1; }
grep -E '^# (pass|fail)' "$tmp/node-honest.out"
set +e
(cd "$prefix" && node --test trap.test.mjs) >"$tmp/node-trap.out" 2>&1
rc=$?
set -e
if [ "$rc" = 0 ] || [ "$(grep -c 'FAIL attempts: want 5, got 3' "$tmp/node-trap.out")" -lt 2 ] || ! grep -q '^# fail 2' "$tmp/node-trap.out"; then
  cat "$tmp/node-trap.out"
  echo "dist: the node:test trap must fail both tests with 'FAIL attempts: want 5, got 3'; exit $rc"
  exit 1
fi
echo "node:test trap: exit $rc, both tests failed with the verdict's words (${SECONDS}s)"

echo "== dist: action.yml and the example workflow"
go test -count=1 -run 'TestAction' ./cmd/retrylab/
echo "== dist passed (${SECONDS}s)"
