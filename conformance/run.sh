#!/usr/bin/env bash
# Runs a provider's official SDK against our emulator of it. Usage: conformance/run.sh <provider>
# Needs node and npm (the SDK is installed into conformance/.scratch/, never committed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in
  daytona) exec "$here/daytona/run.sh" ;;
  vercel) exec "$here/vercel/run.sh" ;;
  *) echo "usage: $0 <provider>   (providers: daytona, vercel)" >&2; exit 2 ;;
esac
