#!/usr/bin/env bash
# The official `e2b` and `@e2b/code-interpreter` npm SDKs against the E2B emulator:
# builds the emulator, installs the SDKs into conformance/.scratch/e2b, starts
# dev.sandbox4j.emulators.e2b.E2bEmulatorMain on a free loopback port, runs check.mjs with
# E2B_API_URL / E2B_SANDBOX_URL pointing at it, and checks the emulator leaked no sandbox.
# Env: E2B_SDK_VERSION / E2B_CI_SDK_VERSION pin the SDK versions (default: the versions checked here).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
conformance_init e2b

echo "== building the emulator"
conformance_build

echo "== installing the SDKs"
conformance_npm_install e2b "${E2B_SDK_VERSION:-2.51.0}" @e2b/code-interpreter "${E2B_CI_SDK_VERSION:-2.8.0}"
echo "e2b $(node -p "require('$scratch/node_modules/e2b/package.json').version"), @e2b/code-interpreter $(node -p "require('$scratch/node_modules/@e2b/code-interpreter/package.json').version")"

export E2B_API_KEY="e2b_conformance_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
conformance_start 's/^E2B emulator listening on \(http:[^ ]*\).*/\1/p' \
  dev.sandbox4j.emulators.e2b.E2bEmulatorMain --port 0 --trace
echo "== emulator on $url (request log: $emulator_log)"

status=0
E2B_API_URL="$url" E2B_SANDBOX_URL="$url" E2B_SDK_DIR="$scratch" node "$here/check.mjs" || status=$?

# The emulator reports its ledger when it stops: no sandbox may be left alive.
conformance_stop
trap - EXIT
ledger="$(grep -o 'ledger: .*' "$emulator_log" | tail -1 || true)"
echo "== emulator $ledger"
case "$ledger" in
  *"live=0"*) ;;
  *) echo "the emulator did not report live=0 at shutdown" >&2; status=1 ;;
esac
exit "$status"
