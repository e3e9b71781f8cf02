#!/usr/bin/env bash
# The -Plive contract run against the provider emulators on loopback, with fake keys: checks the live
# wiring (credentials from the environment, base-URL overrides, the canary) without a real account.
# Usage: live/against-emulators.sh   (LIVE_MVN_FLAGS, default -o, go to every Maven call)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scratch="$root/live/.scratch"
mkdir -p "$scratch"
flags="${LIVE_MVN_FLAGS:--o}"

echo "== building the emulators"
./mvnw -B -q $flags -pl sandbox-emulators -am -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip package \
    org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
    -Dmdep.includeScope=runtime -Dmdep.outputFile="$scratch/classpath.txt" >"$scratch/build.log" 2>&1 \
  || { cat "$scratch/build.log" >&2; exit 1; }
cp="$root/sandbox-emulators/target/classes:$(cat "$scratch/classpath.txt")"

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT

# start <log> <main> [args]: runs an emulator in the background and waits for its first line
start() {
  local log="$scratch/$1"; shift
  java -cp "$cp" "$@" >"$log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 300); do
    [ -s "$log" ] && grep -q . "$log" && return 0
    sleep 0.1
  done
  cat "$log" >&2; echo "live: $* printed nothing" >&2; exit 1
}
first_url() { sed -n 's|^\(http://[^ ]*\)$|\1|p' "$scratch/$1" | head -n 1; }

rand() { od -An -N8 -tx1 /dev/urandom | tr -d ' \n'; }
export E2B_API_KEY="e2b_live_fake_$(rand)"
start e2b.log dev.sandbox4j.emulators.e2b.E2bEmulatorMain --port 0
for _ in $(seq 1 100); do grep -q '^export E2B_SANDBOX_URL=' "$scratch/e2b.log" && break; sleep 0.1; done
eval "$(grep '^export E2B_API_URL=\|^export E2B_SANDBOX_URL=' "$scratch/e2b.log")"

export VERCEL_TOKEN="live-fake-$(rand)" VERCEL_TEAM_ID="team_live" VERCEL_PROJECT_ID="prj_live"
unset VERCEL_OIDC_TOKEN
start vercel.log dev.sandbox4j.emulators.vercel.VercelEmulatorMain 0
export VERCEL_API_URL="$(first_url vercel.log)/api"

export DAYTONA_EMULATOR_API_KEY="live-fake-$(rand)"
start daytona.log dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain 0
export DAYTONA_API_URL="$(first_url daytona.log)" DAYTONA_API_KEY="$DAYTONA_EMULATOR_API_KEY" DAYTONA_TARGET=us

echo "== emulators: E2B $E2B_API_URL, Vercel $VERCEL_API_URL, Daytona $DAYTONA_API_URL"
./mvnw -B $flags -Plive -pl sandbox-e2b,sandbox-vercel,sandbox-daytona -am \
    -Dmaven.javadoc.skip -Dmaven.source.skip verify
