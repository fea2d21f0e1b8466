#!/usr/bin/env bash
#===- utils/run-tests.sh - set up, build and run every test --------------===#
#
# The README's test command and what .ci/run calls. Ends with ctest's
# summary and exits non-zero when any test fails.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/utils/setup.sh"
# The sanitizer trees the ctests sanitize.* run (utils/sanitize.sh).
OBER_BUILD_DIR="${OBER_BUILD_DIR:-$root/build}" "$root/utils/sanitize.sh" build
ctest --test-dir "${OBER_BUILD_DIR:-$root/build}" --output-on-failure \
  -j "$(nproc)"
