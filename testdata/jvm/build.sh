#!/usr/bin/env bash
# Builds the JVM SDK clients (pom.xml; docs/sdk-clients.md): compiles them
# and writes their dependencies' classpath to MODULE/target/classpath.txt, which
# run.sh reads (one per module: anthropic/, openai/). Offline first: once Maven Central's artifacts are in the
# local repository (the default ~/.m2, kept between runs on a machine, so a
# CI run on a warm machine downloads nothing), the build needs no network;
# when something is missing the offline attempt fails at once and the build
# resolves it online.
set -euo pipefail
cd "$(dirname "$0")"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! mvn -o -q -B -Dstyle.color=never compile >"$log" 2>&1; then
  echo "(offline build failed: something is not in the local repository yet, or the build is broken; resolving from Maven Central)"
  mvn -q -B -Dstyle.color=never compile
fi
test -s anthropic/target/classpath.txt && test -s openai/target/classpath.txt
