#!/usr/bin/env bash
# The official `e2b` and `@e2b/code-interpreter` npm SDKs against the E2B emulator:
# builds the emulator, installs the SDKs into conformance/.scratch/e2b, starts
# dev.sandbox4j.emulators.e2b.E2bEmulatorMain on a free loopback port, runs check.mjs with
# E2B_API_URL / E2B_SANDBOX_URL pointing at it, and checks the emulator leaked no sandbox.
# Env: E2B_SDK_VERSION / E2B_CI_SDK_VERSION pin the SDK versions (default: latest).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
scratch="$root/conformance/.scratch"
sdk="$scratch/e2b"
mkdir -p "$sdk"
command -v node >/dev/null || { echo "node is not installed" >&2; exit 2; }

echo "== building the emulator"
cd "$root"
mvn_args=(-B -q -pl sandbox-emulators -am package -DskipTests dependency:build-classpath
  -Dmdep.outputFile="$scratch/e2b.classpath" -Dmdep.includeScope=test)  # test scope: slf4j-simple, for the log
./mvnw -o "${mvn_args[@]}" >/dev/null 2>&1 || ./mvnw "${mvn_args[@]}"
cp="$root/sandbox-emulators/target/classes:$(cat "$scratch/e2b.classpath")"

echo "== installing the SDKs"
if [ ! -f "$sdk/package.json" ]; then (cd "$sdk" && npm init -y >/dev/null); fi
(cd "$sdk" && npm install --no-audit --no-fund --silent \
  "e2b@${E2B_SDK_VERSION:-latest}" "@e2b/code-interpreter@${E2B_CI_SDK_VERSION:-latest}")
echo "e2b $(node -p "require('$sdk/node_modules/e2b/package.json').version"), @e2b/code-interpreter $(node -p "require('$sdk/node_modules/@e2b/code-interpreter/package.json').version")"

export E2B_API_KEY="e2b_conformance_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
log="$scratch/e2b-emulator.log"
java -cp "$cp" dev.sandbox4j.emulators.e2b.E2bEmulatorMain --port 0 --trace >"$log" 2>&1 &
emulator_pid=$!
stop() {
  if kill -0 "$emulator_pid" 2>/dev/null; then
    kill "$emulator_pid"
    wait "$emulator_pid" 2>/dev/null || true
  fi
}
trap stop EXIT

url=""
for _ in $(seq 1 200); do
  url="$(sed -n 's/^E2B emulator listening on \(http:[^ ]*\).*/\1/p' "$log" | head -1)"
  [ -n "$url" ] && break
  kill -0 "$emulator_pid" 2>/dev/null || { cat "$log" >&2; echo "the emulator did not start" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$log" >&2; echo "the emulator did not print its URL" >&2; exit 1; }
echo "== emulator on $url (request log: $log)"

status=0
E2B_API_URL="$url" E2B_SANDBOX_URL="$url" E2B_SDK_DIR="$sdk" node "$root/conformance/e2b/check.mjs" || status=$?

stop
trap - EXIT
ledger="$(grep -o 'ledger: .*' "$log" | tail -1 || true)"
echo "== emulator $ledger"
case "$ledger" in
  *"live=0"*) ;;
  *) echo "the emulator did not report live=0 at shutdown" >&2; status=1 ;;
esac
exit "$status"
