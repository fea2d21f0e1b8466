//===- Passes.td - the CPU target's passes ----------------*- tablegen -*-===//
//
// Part of Ober-Train. The passes of the CPU pipeline that upstream MLIR
// does not have; `--ober-cpu-pipeline` (Pipeline.h) runs them in order.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CPU_PASSES_TD
#define OBER_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"ober-cpu-fuse-elementwise", "ModuleOp"> {
  let summary = "Fuse elementwise chains, keeping every result they return";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` fuses a producer only into its
    only consumer. Here an elementwise producer also fuses into an
    elementwise consumer when other ops use its result: the fused op
    yields that result too, so the loop runs once and nothing is computed
    twice. An optimizer update (new moments, new parameter) becomes one
    pass over each parameter instead of one per moment and one for the
    update; a chain feeding a reduction fuses into it when the reduction is
    its only use. Reshapes fold into the fused ops as upstream does.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def ReuseDeadInputsPass : Pass<"ober-cpu-reuse-dead-inputs", "ModuleOp"> {
  let summary = "Write elementwise results into an input's tensor";
  let description = [{
    A linalg op whose output starts as `tensor.empty`, is written one
    element per iteration and never read by the body takes, as its output,
    an input read with the same indexing map and of the same type that no
    op reads after it (its other readers come before it in its block, and
    none is a call or a kernel call's buffer, whose aliases bufferization
    cannot follow). One-shot bufferization then writes the result into
    that input's buffer (an optimizer's new moment into the old one's, an
    activation's gradient into the incoming gradient's) unless the buffer
    is read only (a function argument the caller keeps).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DistributePass : Pass<"ober-cpu-distribute", "ModuleOp"> {
  let summary = "Split large loop nests into chunks that threads share";
  let description = [{
    On tensors, before bufferization: a linalg op of at least
    `min-iterations` iterations is tiled along its outermost parallel
    dimensions into an `scf.forall` of about `chunks` tiles (the innermost
    dimension stays whole when an outer one gives chunks, so that each tile
    runs a loop the vectorizer widens); a dimension some output does not
    index is never split. The pipeline turns each forall into
    an OpenMP work-sharing loop: the threads (`--threads` of the executable)
    take the tiles. Reduction dimensions are never split, so results do not
    depend on the thread count.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "The smallest iteration count worth threads">,
    Option<"chunks", "chunks", "int64_t", /*default=*/"64",
           "Tiles to aim for">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def ReturnInPlacePass : Pass<"ober-cpu-return-in-place", "ModuleOp"> {
  let summary = "Drop results a public function wrote into its arguments";
  let description = [{
    After bufferization, a public function that returns one of its own
    (writable) argument buffers, which it updated in place, stops returning
    it: the caller's buffer already holds the value. The dropped results
    are listed in the function attribute `ober_cpu.results_in_place` as
    (result index, argument index) pairs for the runtime. Without this,
    deallocation would copy each returned argument.
  }];
}

def FreeAtLastUsePass : Pass<"ober-cpu-free-at-last-use", "ModuleOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Ownership-based deallocation frees a function's buffers at the end of
    the block that owns them: a training step would hold every activation
    and gradient until it returns. This pass moves each unconditional
    `memref.dealloc` up to just after the last op of its block that uses
    the buffer or a view of it (uses nested in loops and calls count as
    their enclosing op's; a result of such an op may alias the buffer and
    counts too). A buffer that reaches a terminator of that block stays
    where it is.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def OutlineKernelsPass : Pass<"ober-cpu-outline-kernels", "ModuleOp"> {
  let summary = "Move each loop nest on buffers into a function of its own";
  let description = [{
    After bufferization, every linalg op and every `scf.forall` or
    `scf.parallel` on buffers (a kernel) moves into a private function
    `@<function>_kernel<N>` taking the buffers and scalars it uses
    (constants are copied in), called where it was. The function the
    program runs becomes a sequence of allocations, kernel calls, library
    calls and control flow; LLVM then optimizes and vectorizes each kernel
    as its own small function (one function of thousands of loops takes
    LLVM minutes) and never inlines them back (`noinline`).
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def VectorizableMathPass : Pass<"ober-cpu-vectorizable-math", "ModuleOp"> {
  let summary = "Math functions as polynomials the loop vectorizer widens";
  let description = [{
    `exp`, `expm1`, `log`, `log1p`, `log2`, `tanh` and `erf` on f32
    become MLIR's polynomial approximations (arith ops, about an ulp from
    libm, NaN and infinities handled), so that a loop of them vectorizes
    instead of calling scalar libm once per element. Other math functions,
    and every one on f64, stay libm calls.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def CopiesAsLoopsPass : Pass<"ober-cpu-copies-as-loops", "ModuleOp"> {
  let summary = "Copies between buffers as linalg copies";
  let description = [{
    `memref.copy` (of slices and strided views too) becomes `linalg.copy`,
    which lowers to loops, instead of a call to the MLIR runner library's
    `memrefCopy`: generated code needs no library of MLIR's.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // OBER_TARGET_CPU_PASSES_TD
