#!/usr/bin/env bash
# Runs an official provider SDK against the sandbox4j emulator of that provider.
# Usage: conformance/run.sh <provider>. Exit 0 when the SDK's main flow passes every check.
# Each provider keeps its part in conformance/<provider>/; npm installs go to conformance/.scratch/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
provider="${1:-}"
case "$provider" in
  vercel) exec "$here/vercel/run.sh" ;;
  *) echo "usage: $0 <provider>   (known: vercel)" >&2; exit 2 ;;
esac
