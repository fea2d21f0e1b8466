#!/usr/bin/env bash
#===- utils/setup.sh - install, configure and build Ober-Train -----------===#
#
# On a fresh Debian 12 machine: installs the Debian packages the build and the
# tests use (only those missing), configures build/ with CMake + Ninja
# (clang-22 and lld when present) and builds everything.
#
#   utils/setup.sh            # install what is missing, configure, build
#   OBER_BUILD_TYPE=Debug utils/setup.sh
#
#===----------------------------------------------------------------------===#
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OBER_BUILD_DIR:-$root/build}"

# The packages, one per line with what needs them.
packages=(
  cmake ninja-build            # build system
  g++ libc6-dev                # the C++ standard library headers clang uses
  clang-22 lld-22              # compiler and linker (faster and leaner than g++)
  llvm-22-dev libmlir-22-dev   # LLVM/MLIR 22 headers, libLLVM.so, libMLIR.so
  mlir-22-tools                # mlir-tblgen
  llvm-22-tools                # lit, FileCheck, not, count
  python3                      # lit and test helpers (Debian's /usr/bin/python3)
  libonnx-dev libprotobuf-dev protobuf-compiler  # the ONNX importer
  python3-onnx python3-numpy libonnx-testdata    # ONNX conformance tests
  python3-torch python3-torchvision              # PyTorch parity tests
  libtorch-dev                 # the TorchScript importer (optional component)
  python3-pytest python3-setuptools              # the ober Python package's tests and install
  libopenblas0-pthread         # fast BLAS for numpy and torch in the tests
  libdnnl-dev                  # the CPU kernel library (matmul, convolution)
  libomp-22-dev                # LLVM's OpenMP: generated loops' threads (and oneDNN's)
  openmpi-bin libopenmpi-dev   # the MPI transport: executables under mpirun
  slurm-wlm                    # srun: the Slurm test's one-node cluster
  libclang-rt-22-dev           # libFuzzer and sanitizers for the fuzz target
  chromium                     # the plan page's rendering test (headless)
)

missing=()
for p in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

compilers=()
if command -v clang++-22 >/dev/null && command -v clang-22 >/dev/null; then
  compilers=(-DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22)
  command -v ld.lld-22 >/dev/null && compilers+=(-DLLVM_USE_LINKER=lld)
fi

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE="${OBER_BUILD_TYPE:-Release}" "${compilers[@]}"
fi
# Two parallel MLIR compiles fit comfortably in 24 GiB with clang.
ninja -C "$build" ${OBER_JOBS:+-j "$OBER_JOBS"}
