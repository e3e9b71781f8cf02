#!/usr/bin/env bash
# The official @daytonaio/sdk against the Daytona emulator: builds and starts the emulator (each sandbox
# a local bubblewrap sandbox), installs the SDK into conformance/.scratch/daytona, runs check.mjs, and
# exits 0 when every check passes. What the SDK sent is left in conformance/.scratch/daytona/calls.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scratch="$root/conformance/.scratch/daytona"
sdk_version="${DAYTONA_SDK_VERSION:-0.218.0}"
mkdir -p "$scratch"

command -v node >/dev/null || { echo "conformance/daytona: node is required" >&2; exit 2; }
command -v npm >/dev/null || { echo "conformance/daytona: npm is required" >&2; exit 2; }

# 1. Build the emulator and write its classpath (package only: nothing goes into ~/.m2 but downloads).
#    CONFORMANCE_MVN_FLAGS=-o builds offline once the plugins are cached.
(cd "$root" && ./mvnw -B -q ${CONFORMANCE_MVN_FLAGS:-} -pl sandbox-emulators -am -DskipTests package \
    org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$scratch/classpath.txt" >"$scratch/build.log" 2>&1) \
  || { cat "$scratch/build.log" >&2; exit 1; }
cp="$root/sandbox-emulators/target/classes:$(cat "$scratch/classpath.txt")"

# 2. The official SDK, pinned (override with DAYTONA_SDK_VERSION).
if [ ! -f "$scratch/node_modules/@daytonaio/sdk/package.json" ] \
   || ! grep -q "\"version\": \"$sdk_version\"" "$scratch/node_modules/@daytonaio/sdk/package.json"; then
  (cd "$scratch" && { [ -f package.json ] || echo '{"private":true,"type":"module"}' > package.json; } \
     && npm install --no-audit --no-fund --silent "@daytonaio/sdk@$sdk_version")
fi
cp "$here/check.mjs" "$scratch/check.mjs"

# 3. Start the emulator on a free port with a made-up key; new sandboxes answer `starting` twice so the
#    SDK's wait-for-started polling runs. Stop it on exit.
export DAYTONA_EMULATOR_API_KEY="conformance-key-$RANDOM$RANDOM"
export DAYTONA_EMULATOR_STARTING_POLLS="${DAYTONA_EMULATOR_STARTING_POLLS:-2}"
log="$scratch/emulator.log"
java -cp "$cp" dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain 0 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 300); do
  url="$(head -n 1 "$log" 2>/dev/null || true)"
  case "$url" in http://*) break ;; esac
  kill -0 $pid 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
case "$url" in http://*) ;; *) echo "conformance/daytona: the emulator did not start" >&2; cat "$log" >&2; exit 1 ;; esac

# 4. The SDK's main flow, configured as a user would (explicit apiUrl and key, target us).
(cd "$scratch" && DAYTONA_API_URL="$url" DAYTONA_API_KEY="$DAYTONA_EMULATOR_API_KEY" DAYTONA_TARGET=us node check.mjs)
