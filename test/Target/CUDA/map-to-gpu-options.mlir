// RUN: not ober-opt %s --ober-cuda-map-to-gpu="threads-per-block=100" 2>&1 | FileCheck %s
// CHECK: error: threads-per-block=100 must be a multiple of 32 in [32, 1024]
func.func @f() {
  return
}
