#!/usr/bin/env bash
#===- utils/sanitize.sh - the test suites under sanitizers ---------------===#
#
#   utils/sanitize.sh build          build both sanitizer trees
#   utils/sanitize.sh asan-lit       lit (every test) on the ASan+UBSan tools
#   utils/sanitize.sh asan-unit      the runtime's unit tests under ASan+UBSan
#   utils/sanitize.sh asan-partition the partitioner's model tests (every
#                                    second plan) and 8 random models
#                                    (seeds 24-31, which the
#                                    uninstrumented run's 0-23 leave out)
#                                    on the ASan+UBSan tools
#   utils/sanitize.sh tsan           the collectives' thread backend under
#                                    ThreadSanitizer
#
# Two more build trees beside the main one (OBER_BUILD_DIR, default build):
# <build>-asan holds the tools, the runtime and the executables they link,
# built with AddressSanitizer and UndefinedBehaviorSanitizer (a report ends
# the process, so a test fails); <build>-tsan holds the runtime alone, built
# with ThreadSanitizer. The ctests sanitize.* run the last three commands
# (each builds what it needs first; utils/run-tests.sh builds both trees
# before ctest). Leaks are not checked in the tools (MLIR's contexts and
# LLVM's option registry live until exit by design); the runtime's unit
# tests check them. Manual poisoning is off: LLVM's BumpPtrAllocator,
# inlined into instrumented code, poisons slabs that the uninstrumented
# libMLIR then fills (a false use-after-poison while parsing).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OBER_BUILD_DIR:-$root/build}"
asan="$build-asan" tsan="$build-tsan"
compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
           -DLLVM_USE_LINKER=lld)
jobs=(${OBER_JOBS:+-j "$OBER_JOBS"})
lit_tools=(ober-opt ober-translate ober-run ober-compile ober-launch ober-calibrate
           ober_rt_main)
unit_tests=(ober-rt-launch-env-test ober-rt-files-test ober-rt-program-test
            ober-rt-tracking-test ober-rt-collectives-test)

configure() { # DIR SANITIZERS [cmake options]
  local dir="$1" sanitizers="$2"
  shift 2
  [[ -f "$dir/build.ninja" ]] && return
  mkdir -p "$dir"
  # -O1, as the sanitizers' documentation advises: a quarter less compile
  # time than -O3, and the time of the tests under them is mostly in the
  # uninstrumented libMLIR.
  cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    "${compilers[@]}" -DOBER_SANITIZE="$sanitizers" "$@" > "$dir/configure.log"
}
build_asan() {
  configure "$asan" address,undefined
  ninja -C "$asan" "${jobs[@]}" "${lit_tools[@]}" "${unit_tests[@]}" ober-fuzz
}
build_tsan() {
  configure "$tsan" thread -DOBER_BUILD_COMPILER=OFF
  ninja -C "$tsan" "${jobs[@]}" ober-rt-collectives-test
}

export ASAN_OPTIONS="detect_leaks=0:allow_user_poisoning=0:${ASAN_OPTIONS:-}"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}"
export TSAN_SYMBOLIZER_PATH="${TSAN_SYMBOLIZER_PATH:-$ASAN_SYMBOLIZER_PATH}"
export UBSAN_OPTIONS="print_stacktrace=1:${UBSAN_OPTIONS:-}"
case "${1:-}" in
  build) build_asan; build_tsan ;;
  asan-lit)
    build_asan
    exec /usr/lib/llvm-22/bin/lit -sv "$asan/test" ;;
  asan-unit)
    build_asan
    export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS#detect_leaks=0:}"
    for t in "${unit_tests[@]}"; do
      echo "== $t"
      "$asan/unittests/$t"
    done ;;
  asan-partition)
    build_asan
    # Every second plan of each model (the uninstrumented partitioning
    # tests run them all): half the time, each plan feature still covered.
    /usr/bin/python3 "$root/test/python/partition_test.py" --bin "$asan/bin" \
      --plan-stride 2
    /usr/bin/python3 "$root/test/python/partition_random_test.py" \
      --bin "$asan/bin" --first 24 --count 8 ;;
  tsan)
    build_tsan
    export TSAN_OPTIONS="halt_on_error=1:${TSAN_OPTIONS:-}"
    exec "$tsan/unittests/ober-rt-collectives-test" ;;
  *) echo "usage: utils/sanitize.sh build|asan-lit|asan-unit|asan-partition|tsan" >&2
     exit 2 ;;
esac
