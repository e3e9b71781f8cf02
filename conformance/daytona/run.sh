#!/usr/bin/env bash
# The official @daytonaio/sdk against the Daytona emulator: builds and starts the emulator (each sandbox
# a local bubblewrap sandbox), installs the SDK into conformance/.scratch/daytona, runs check.mjs, and
# exits 0 when every check passes. What the SDK sent is left in conformance/.scratch/daytona/calls.json.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
conformance_init daytona

conformance_build
# The official SDK, pinned (override with DAYTONA_SDK_VERSION).
conformance_npm_install @daytonaio/sdk "${DAYTONA_SDK_VERSION:-0.218.0}"
cp "$here/check.mjs" "$scratch/check.mjs"

# A made-up key; new sandboxes answer `starting` twice so the SDK's wait-for-started polling runs.
export DAYTONA_EMULATOR_API_KEY="conformance-key-$RANDOM$RANDOM"
export DAYTONA_EMULATOR_STARTING_POLLS="${DAYTONA_EMULATOR_STARTING_POLLS:-2}"
conformance_start '1s|^\(http://.*\)$|\1|p' dev.sandbox4j.emulators.daytona.DaytonaEmulatorMain 0

# The SDK's main flow, configured as a user would (explicit apiUrl and key, target us).
(cd "$scratch" && DAYTONA_API_URL="$url" DAYTONA_API_KEY="$DAYTONA_EMULATOR_API_KEY" DAYTONA_TARGET=us node check.mjs)
