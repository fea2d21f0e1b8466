// RUN: ober-opt %s --ober-cpu-vectorizable-math | FileCheck %s

// exp, tanh and erf of f32 become polynomials (arith ops a loop vectorizer
// widens); sin stays a math op (libm later), and so does exp of f64.
// CHECK-LABEL: func.func @f
// CHECK-NOT: math.exp %{{.*}} : f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
func.func @f(%x: f32, %d: f64) -> (f32, f32, f32, f32, f64) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.sin %x : f32
  %4 = math.exp %d : f64
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f64
}
