#!/usr/bin/env bash
# Runs an official provider SDK against the sandbox4j emulator of that provider.
# Usage: conformance/run.sh <provider>. Exit 0 when the SDK's main flow passes every check.
# Each provider keeps its part in conformance/<provider>/; npm installs go to conformance/.scratch/
# (never committed). Needs node and npm.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in
  e2b) exec "$here/e2b/run.sh" ;;
  daytona) exec "$here/daytona/run.sh" ;;
  vercel) exec "$here/vercel/run.sh" ;;
  modal) exec "$here/modal/run.sh" ;;
  mcp) exec "$here/mcp/run.sh" ;;
  *) echo "usage: $0 <provider>   (known: e2b, daytona, vercel, modal, mcp)" >&2; exit 2 ;;
esac
