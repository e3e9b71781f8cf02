#!/usr/bin/env bash
# The official @vercel/sandbox SDK against the Vercel emulator: builds and starts the emulator,
# installs the SDK into conformance/.scratch/vercel, runs check.mjs, exits 0 when every check passes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="$root/conformance/.scratch/vercel"
sdk_version="${VERCEL_SANDBOX_SDK_VERSION:-3.5.0}"
mkdir -p "$scratch"

command -v node >/dev/null || { echo "conformance/vercel: node is required" >&2; exit 2; }
command -v npm >/dev/null || { echo "conformance/vercel: npm is required" >&2; exit 2; }

# 1. Build the emulator and write its classpath (package only: nothing goes into ~/.m2 but downloads).
#    CONFORMANCE_MVN_FLAGS=-o builds offline once the plugins are cached.
(cd "$root" && ./mvnw -B -q ${CONFORMANCE_MVN_FLAGS:-} -pl sandbox-emulators -am -DskipTests package \
    org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$scratch/classpath.txt" >"$scratch/build.log" 2>&1) \
  || { cat "$scratch/build.log" >&2; exit 1; }
cp="$root/sandbox-emulators/target/classes:${EXTRA_CLASSPATH:+$EXTRA_CLASSPATH:}$(cat "$scratch/classpath.txt")"

# 2. The official SDK, pinned (override with VERCEL_SANDBOX_SDK_VERSION).
if [ ! -f "$scratch/node_modules/@vercel/sandbox/package.json" ] \
   || ! grep -q "\"version\": \"$sdk_version\"" "$scratch/node_modules/@vercel/sandbox/package.json"; then
  (cd "$scratch" && { [ -f package.json ] || echo '{"private":true,"type":"module"}' > package.json; } \
     && npm install --no-audit --no-fund --silent "@vercel/sandbox@$sdk_version")
fi
cp "$here/check.mjs" "$scratch/check.mjs"

# 3. Start the emulator on a free port with made-up credentials; stop it on exit.
export VERCEL_TOKEN="conformance-token-$RANDOM$RANDOM"
export VERCEL_TEAM_ID="team_conformance"
export VERCEL_PROJECT_ID="prj_conformance"
log="$scratch/emulator.log"
java -cp "$cp" "${EMULATOR_MAIN:-dev.sandbox4j.emulators.vercel.VercelEmulatorMain}" 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
  url="$(head -n 1 "$log" 2>/dev/null || true)"
  case "$url" in http://*) break ;; esac
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
case "$url" in http://*) ;; *) echo "conformance/vercel: the emulator did not start" >&2; cat "$log" >&2; exit 1 ;; esac

# 4. The SDK's main flow.
(cd "$scratch" && EMULATOR_URL="$url" node check.mjs)
