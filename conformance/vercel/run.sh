#!/usr/bin/env bash
# The official @vercel/sandbox SDK against the Vercel emulator: builds and starts the emulator,
# installs the SDK into conformance/.scratch/vercel, runs check.mjs, exits 0 when every check passes.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
conformance_init vercel

conformance_build
# The official SDK, pinned (override with VERCEL_SANDBOX_SDK_VERSION).
conformance_npm_install @vercel/sandbox "${VERCEL_SANDBOX_SDK_VERSION:-3.5.0}"
cp "$here/check.mjs" "$scratch/check.mjs"

# Made-up credentials.
export VERCEL_TOKEN="conformance-token-$RANDOM$RANDOM"
export VERCEL_TEAM_ID="team_conformance"
export VERCEL_PROJECT_ID="prj_conformance"
conformance_start '1s|^\(http://.*\)$|\1|p' "${EMULATOR_MAIN:-dev.sandbox4j.emulators.vercel.VercelEmulatorMain}" 0

# The SDK's main flow.
(cd "$scratch" && EMULATOR_URL="$url" node check.mjs)
