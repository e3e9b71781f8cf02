#!/usr/bin/env bash
# The official Modal JS SDK (npm `modal`, pinned to 0.11.1: `modal` 1.x on npm is an unrelated browser
# package) against the Modal emulator: builds sandbox-emulators-modal, installs the SDK into
# conformance/.scratch/modal, starts dev.sandbox4j.emulators.modal.ModalEmulatorMain on free loopback
# ports, runs check.mjs with MODAL_SERVER_URL pointing at it, and checks the emulator leaked no sandbox.
# Env: MODAL_SDK_VERSION overrides the pin (keep it 0.x).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
conformance_init modal

echo "== building the emulator"
conformance_build sandbox-emulators-modal

echo "== installing the SDK"
conformance_npm_install modal "${MODAL_SDK_VERSION:-0.11.1}"
echo "modal $(node -p "require('$scratch/node_modules/modal/package.json').version")"
cp "$here/check.mjs" "$scratch/check.mjs"

# Made-up credentials; no ~/.modal.toml is read.
export MODAL_TOKEN_ID="ak-conformance$RANDOM$RANDOM"
export MODAL_TOKEN_SECRET="as-conformance$RANDOM$RANDOM"
export MODAL_CONFIG_PATH="$scratch/no-such-modal.toml"
# Waits for the summary line (printed after the export lines): it carries both URLs.
conformance_start 's/^# Modal emulator: control plane \(http:[^,]*\),.*/\1/p' dev.sandbox4j.emulators.modal.ModalEmulatorMain
record="$(sed -n 's/.*record at \(http:[^ ]*\).*/\1/p' "$emulator_log" | head -n 1)"
echo "== emulator on $url (log: $emulator_log)"

status=0
(cd "$scratch" && MODAL_SERVER_URL="$url" EMULATOR_RECORD_URL="$record" node check.mjs) || status=$?

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
