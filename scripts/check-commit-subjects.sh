#!/usr/bin/env bash
# Fails when a commit subject is over 72 characters (details go in the body), for the commits
# after the one where the rule started; older history is left alone. CI runs it (.ci/run).
#
#   bash scripts/check-commit-subjects.sh [REV]     (default HEAD)
#
# CHARTER_SUBJECTS_SINCE overrides the commit where the rule started (the tests use it).
# In a shallow clone that does not reach that commit, the commits it can see are checked, and
# the script says so.
set -euo pipefail

MAX=72
SINCE="${CHARTER_SUBJECTS_SINCE:-6db744c52311d85e2bdb7c39980fa6f752abdf3e}"
REV="${1:-HEAD}"
# ${#subject} counts characters, not bytes, under a UTF-8 locale.
export LC_ALL=C.UTF-8

if ! git rev-parse -q --verify "$REV^{commit}" >/dev/null; then
  echo "check-commit-subjects: $REV is not a commit" >&2
  exit 2
fi

if git cat-file -e "$SINCE^{commit}" 2>/dev/null; then
  range=("$SINCE..$REV")
  if git merge-base --is-ancestor "$SINCE" "$REV"; then
    scope="the commits after ${SINCE:0:12}"
  else
    scope="the commits of $REV that ${SINCE:0:12} does not contain (it is not an ancestor)"
  fi
elif [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  range=("$REV")
  scope="every commit this shallow clone has: ${SINCE:0:12} is beyond its history"
else
  echo "check-commit-subjects: ${SINCE:0:12}, where the rule starts, is not in this repository" >&2
  exit 2
fi

checked=0
long=()
while IFS=$'\t' read -r hash subject; do
  checked=$((checked + 1))
  if [ "${#subject}" -gt "$MAX" ]; then
    long+=("${hash:0:12} (${#subject} characters): $subject")
  fi
done < <(git log --format=$'%H\t%s' "${range[@]}")

if [ "${#long[@]}" -gt 0 ]; then
  {
    echo "commit subjects over $MAX characters (put the details in the body):"
    printf '  %s\n' "${long[@]}"
    echo "checked $checked commits: $scope"
  } >&2
  exit 1
fi
echo "commit subjects: $checked checked, none over $MAX characters ($scope)"
