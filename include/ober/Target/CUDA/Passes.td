//===- Passes.td - the CUDA target's passes ---------------*- tablegen -*-===//
//
// Part of Ober-Train. The passes of the CUDA pipeline that upstream MLIR
// does not have; `--ober-cuda-pipeline` (Pipeline.h) runs them in order.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TARGET_CUDA_PASSES_TD
#define OBER_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConstantsOnDevicePass : Pass<"ober-cuda-constants-on-device", "ModuleOp"> {
  let summary = "Give kernels device copies of constant buffers";
  let description = [{
    On buffers, before kernels are formed: a `memref.get_global` read by
    anything but a call (the kernel library reads its descriptors on the
    host) becomes a device buffer. A splat constant is filled in place
    (`linalg.fill`, a kernel); any other is copied from the host image by
    `ober_rt_cuda_upload(dst, src)` (unranked memrefs, C interface).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

def KernelCallsPass : Pass<"ober-cuda-kernel-calls", "ModuleOp"> {
  let summary = "Call the CUDA kernel library instead of the CPU one";
  let description = [{
    Matrix products lowered to `ober_rt_cpu_matmul` calls take
    `ober_rt_cuda_matmul`, and the bf16 and f16 ones (`_bf16`, `_f16`)
    the CUDA functions of the same suffix: the same descriptor and
    buffers, on the device, by cuBLASLt. Convolutions have no CUDA kernel yet: the pass fails at the
    call, naming it. Collectives and pipeline transfers stay as they are:
    the executable runs them on the device buffers through NCCL. The
    module's list of CPU kernels to create ahead of the first
    step (`ober_cpu.kernels`) goes.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def SplitReductionsPass
    : Pass<"ober-cuda-split-reductions", "::mlir::func::FuncOp"> {
  let summary = "Spread large reductions with few outputs over many threads";
  let description = [{
    On tensors, before bufferization. A thread of a CUDA kernel computes
    one output element of a linalg op, running its reduction dimensions
    sequentially: a whole-tensor sum (the gradient norm's sum of squares,
    a mean loss) would run in one thread, and a bias gradient (a sum over
    tokens for each of a few thousand features) in few. An op with fewer
    than `min-threads` output elements whose reduction has at least
    `min-extent` iterations becomes two (linalg's split reduction): partial
    results over a new parallel dimension, then their combination. The
    split puts the new dimension innermost in the partials, so that
    adjacent threads read adjacent elements (strided by the split ratio,
    each running `extent / ratio` iterations), and chooses the largest
    ratio that divides the reduction's extent, gives at most
    `target-threads` threads and leaves each at least `min-chunk`
    iterations. The combination is split again while it still has
    `min-extent` iterations or more. An op with enough outputs whose
    reduction runs along an input's innermost dimension (a softmax's or a
    norm's rows: a thread per row would have a warp's threads read 32
    rows, an element of each) is split by 32 instead, from
    `coalesce-min-extent` iterations on (when 32 divides them): a warp
    then reads 32 adjacent elements of one row. The partials' op has its
    reduction dimensions innermost (a thread per point of the parallel
    ones, the new dimension fastest).
    Consecutive reduction dimensions that every operand indexes in order
    (a sum over all of a tensor's dimensions) are first collapsed into
    one. Ops it cannot split (several outputs, a combiner linalg does not
    recognize, a body that reads its indices (`linalg.index`: a one-hot
    fused into the sum; linalg's split would leave them the chunk's), an
    operand indexed by more than a dimension (a pooling window's `2 * d2 +
    d4`), an empty or dynamic iteration space) are left as they are.
  }];
  let options = [
    Option<"minThreads", "min-threads", "int64_t", "16384",
           "Split ops with fewer output elements than this">,
    Option<"targetThreads", "target-threads", "int64_t", "65536",
           "Threads a split aims for (output elements x ratio)">,
    Option<"minExtent", "min-extent", "int64_t", "4096",
           "Split only reductions of at least this many iterations">,
    Option<"minChunk", "min-chunk", "int64_t", "64",
           "The fewest reduction iterations left to each thread">,
    Option<"coalesceMinExtent", "coalesce-min-extent", "int64_t", "256",
           "Split a reduction along an input's innermost dimension by 32 "
           "from this extent on (0: never)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def MapToGPUPass : Pass<"ober-cuda-map-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Run loop nests on the device as one-dimensional grids";
  let description = [{
    After `convert-linalg-to-parallel-loops`: each outermost `scf.parallel`
    becomes a `gpu.launch` of `threads-per-block`-thread blocks, one thread
    per point of its iteration space (linearized, so any rank and any
    extent fit the grid's x dimension); a thread runs the loop's body
    (reduction loops in it stay sequential). A host `scf.for` around a
    parallel loop (a reduction dimension outside parallel ones, as a bias
    gradient's sum over tokens lowers), possibly after scalar work, device
    loads of buffers it does not write and subviews (a scatter's loop over
    indices: the index, the row it names), moves inside it: one launch,
    each thread running the sequential loop and that work, instead of a
    launch per iteration. It moves only where each point provably keeps to
    its own elements across iterations: every access to a buffer the loop
    writes indexes, with one permutation of the parallel induction
    variables, one memref of an injective layout (or subviews of one whose
    offsets vary only in size-1 dimensions), and no access reaches a
    buffer through a memref of unknown origin (buffers are followed
    through views to arguments and allocations; distinct arguments are
    distinct buffers, as the executables pass them). A host `scf.for`
    that reads or writes memory outside any parallel loop (a reduction
    over every dimension, a scatter that fails that proof) runs in one
    thread of its
    own launch, its parallel loops sequential, unless it also calls the
    runtime (the kernel library, collectives: a loop over micro-batches),
    which keeps it on the host with its body mapped as a function's is; a
    store outside any loop of such host code (a rank-0 result) runs in one
    thread, with the loads and arithmetic that feed it. No
    launch is made for an
    empty iteration space. Before that, a one-element integer buffer that
    only the host writes, with values it computes (constants, loop
    indices, arithmetic of such buffers: a pipeline stage's micro-batch
    counter, the slot of its stash of activations), becomes a stack buffer
    when nothing else takes it (a call, a copy) and no loop that runs on
    the device touches it: the host then views the stash at the slot
    itself, and a kernel that reads the buffer takes its value as a launch
    argument. Anything else reading memory on the host (a
    `memref.load` whose value the host uses) is an error: the buffers
    live on the device.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads per block (a multiple of 32, at most 1024)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MergeKernelModulesPass
    : Pass<"ober-cuda-merge-kernel-modules", "ModuleOp"> {
  let summary = "Put every outlined kernel in one GPU module";
  let description = [{
    `gpu-kernel-outlining` makes a `gpu.module` per kernel, and each module
    is compiled by itself: a training step's few hundred kernels would cost
    a few hundred ptxas runs per chip and as many fatbins to load. This
    pass moves every kernel into the first module (`gpu.launch_func`
    references follow), so one PTX module per chip is assembled and loaded.
    Kernels that differ only in name (the same signature, attributes and
    body, as each layer of a stack of identical layers gives) are kept
    once and their launches share it: a 24-layer GPT's step compiles a
    layer's kernels, not 24 copies of them. A name PTX cannot spell (a
    pipeline stage's function `step.stage1` names its kernels
    `step.stage1_kernel`) takes `_` for each character outside letters,
    digits, `_` and `$`, with a suffix where that name is taken.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def QueueLaunchesPass : Pass<"ober-cuda-queue-launches", "::mlir::func::FuncOp"> {
  let summary = "Queue a host function's kernel launches without waiting on each";
  let description = [{
    A synchronous `gpu.launch_func` lowers to a launch followed by a wait
    for the kernel to finish: the host sits idle while each kernel runs and
    the GPU while the host prepares the next, a few microseconds for each
    of a training step's thousands of kernels. Everything a program does on
    the device is ordered on one stream (the runtime's program stream:
    kernels, the kernel library's products, copies, the caching allocator's
    stream-ordered reuse, collectives that wait on events recorded there),
    and the host never reads device memory itself (`ober-cuda-map-to-gpu`
    refuses such code). So this pass makes each launch of the function
    asynchronous on one stream taken at the function's entry
    (`gpu.wait async`), and waits for that stream once, before each
    return: a kernel's fault then surfaces at the end of the function.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FatbinPass : Pass<"ober-cuda-fatbin", "ModuleOp"> {
  let summary = "Assemble each GPU binary's PTX into one fatbin";
  let description = [{
    After `gpu-module-to-binary{format=isa}`, a `gpu.binary` holds one PTX
    object per `#nvvm.target` chip. This pass assembles each with `ptxas`
    (`-O3`, for that chip), adds the newest chip's PTX (the driver compiles
    it for newer GPUs) and packs them with `fatbinary` into one fatbin
    object, which the host code loads whatever the GPU. The tools come from
    `toolkit` (a CUDA installation's root), else `CUDA_ROOT`, `CUDA_HOME`,
    `CUDA_PATH`, the `PATH`, `/usr/local/cuda`. A missing tool or an
    assembler error fails the pass at the binary, with the tool's message.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", "\"\"",
           "The CUDA toolkit's root (bin/ptxas, bin/fatbinary)">,
    Option<"embedPTX", "ptx", "bool", "true",
           "Also embed the newest chip's PTX (for GPUs newer than the chips)">
  ];
}

def TestLaunchesOnHostPass
    : Pass<"test-ober-cuda-launches-on-host", "::mlir::func::FuncOp"> {
  let summary = "Run each gpu.launch's threads as host loops (tests)";
  let description = [{
    For tests on machines without a GPU: each `gpu.launch` becomes loops
    over its blocks and threads (x fastest) running its body one thread
    after another, so that what `ober-cuda-map-to-gpu` makes of a program
    can run on the CPU and be compared with the program before it. The
    loops run from the last block and thread to the first, against the
    order the threads' indices suggest: a kernel whose thread reads what
    a lower-numbered thread writes (which a GPU runs in no set order)
    then computes something else. Correct for kernels whose threads do
    not wait for each other (no barriers, no shared memory), as that
    pass's are. The copies of constants to the device that
    `ober-cuda-constants-on-device` adds (`ober_rt_cuda_upload_<bits>bit`
    calls on casts of ranked buffers) become `memref.copy`.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // OBER_TARGET_CUDA_PASSES_TD
