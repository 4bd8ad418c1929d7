#!/usr/bin/env bash
# Runs npm scripts at the same time, each output printed whole when it ends (so none interleave),
# and fails naming every script that failed. npm test runs the checks that do not depend on each
# other this way: typecheck, lint and build.
#
#   bash scripts/parallel.sh typecheck lint build
set -uo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: bash scripts/parallel.sh SCRIPT..." >&2
  exit 64
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
for name in "$@"; do
  npm run --silent "$name" >"$logs/$name" 2>&1 &
  pids+=("$!")
done

failed=()
for i in "${!pids[@]}"; do
  name=${*:i+1:1}
  if wait "${pids[$i]}"; then status=ok; else status=failed; failed+=("$name"); fi
  printf '\n=== npm run %s: %s\n' "$name" "$status"
  cat "$logs/$name"
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
