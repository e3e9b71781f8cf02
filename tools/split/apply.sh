#!/usr/bin/env bash
# The split of sandbox-api by audience (issue 32), as a replayable script:
#  (a) git mv every file listed in tools/split/moves.tsv to its new module and package;
#  (b) tools/split/rewrite.sh: rewrite the references to the moved names in the whole tree.
# Idempotent: a file already at its new place is left alone. Moves only, no behaviour change.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
moved=0
while IFS=$'\t' read -r kind old new module; do
  [[ -z "$kind" || "$kind" == \#* || "$kind" != class ]] && continue
  oldpath="${old//.//}"; newpath="${new//.//}"
  # package-info keeps its dash: dev/sandbox4j/api/tool/package-info
  found=()
  for f in */src/main/java/"$oldpath".java */src/test/java/"$oldpath".java; do
    [[ -f "$f" ]] && found+=("$f")
  done
  if (( ${#found[@]} == 0 )); then
    continue   # already moved (or never existed on this branch)
  fi
  if (( ${#found[@]} > 1 )); then
    echo "apply: $old found more than once: ${found[*]}" >&2; exit 1
  fi
  src="${found[0]}"
  set_="main"; [[ "$src" == */src/test/java/* ]] && set_="test"
  dest="$module/src/$set_/java/$newpath.java"
  mkdir -p "$(dirname "$dest")"
  git mv "$src" "$dest"
  moved=$((moved + 1))
done < tools/split/moves.tsv
echo "apply: $moved files moved"
tools/split/rewrite.sh
