#!/usr/bin/env bash
# Installs schemathesis (PyPI) into .tools/schemathesis for the reliability suite's OpenAPI fuzzing
# (test/reliability/api/schemathesis.test.ts). Only what is missing; a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned together: schemathesis 3.39 breaks with hypothesis 6.131+ ("'many' object has no attribute 'more'").
SCHEMATHESIS_VERSION="3.39.16"
HYPOTHESIS_VERSION="6.130.13"
VENV=".tools/schemathesis"
# Every other package pinned too (pip freeze of a working install): a new release of any of them
# could break the suite with no change here. The copy in the venv says which pins it was made with.
CONSTRAINTS="scripts/schemathesis-constraints.txt"

# Capture first: `... | grep -q` under pipefail can fail by SIGPIPE and reinstall needlessly.
if [ -x "$VENV/bin/st" ] && [[ "$("$VENV/bin/st" --version 2>/dev/null)" == *"$SCHEMATHESIS_VERSION"* ]] \
  && cmp -s "$CONSTRAINTS" "$VENV/constraints.txt"; then
  exit 0
fi
printf '[setup] installing schemathesis %s into %s\n' "$SCHEMATHESIS_VERSION" "$VENV" >&2
# A new venv each time: one left by an interrupted run, or made with other pins, is not trusted.
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check --constraint "$CONSTRAINTS" \
  "schemathesis==$SCHEMATHESIS_VERSION" "hypothesis==$HYPOTHESIS_VERSION"
cp "$CONSTRAINTS" "$VENV/constraints.txt"
