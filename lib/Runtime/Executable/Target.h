//===- Target.h - what the executable does differently per target -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). The training loop, checkpoints and
// ranks are the same for every target; where the program's buffers live
// and how its kernels are prepared is not. One definition of these per
// target: HostTarget.cpp (libober_rt_main: the CPU) and CUDATarget.cpp
// (libober_rt_main_cuda: buffers on the GPU).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_TARGET_H
#define OBER_LIB_RUNTIME_EXECUTABLE_TARGET_H

#include "Buffers.h"
#include "DeviceMirror.h"

#include "ober/Runtime/Comm.h"

#include <memory>
#include <string>
#include <vector>

namespace ober::rt {

struct Placement; // Run.h

/// A compiled function (`ober_program_entries[stage]`).
using Entry = void (*)(void **);

/// Readies the process for the program's ranks, before the launcher's
/// transport starts (MPI_Init) and before any rank's thread: CUDA asks for
/// eager kernel loading where the program runs on several GPUs (the driver
/// reads that when it starts, which a CUDA-aware MPI may do in MPI_Init).
void prepareProcess(const Program &program);

/// Readies this thread to run the program as rank `where`: the CPU sets
/// the threads of its kernels and loops and creates the program's library
/// kernels; CUDA opens the rank's GPU. False (with a message) when it
/// cannot.
bool prepareRank(const Program &program, const Placement &where, int threads,
                 const std::string &self);

/// The transport of the collectives generated code starts, where its
/// buffers are not host memory (CUDA: NCCL among the ranks' GPUs, its ids
/// sent through `bootstrap`'s group `worldGroup`); null where the rank's
/// own transport serves (the CPU, or one device). Called after
/// prepareRank, by every rank; throws CommError when it cannot be made.
std::unique_ptr<Transport> programTransport(Transport &bootstrap,
                                            const Program &program,
                                            const Placement &where);

/// Calls `entry` (the function of `stage`) on `args` (the program's
/// arguments, in order) and returns its results; a result in an
/// argument's buffer (written in place, or returned there) shares it.
std::vector<HostTensor> invoke(Entry entry, const Program &program,
                               int64_t stage,
                               const std::vector<HostTensor> &args);

/// Brings the host's bytes of `tensors` up to date before the host reads
/// them. A target whose buffers are device memory keeps the parameters and
/// optimizer state a step writes in place there between steps (CUDA:
/// DeviceMirror.h); the host's copies are stale until this. The host never
/// writes into such a tensor: it puts a new one in its place.
void syncToHost(const std::vector<HostTensor> &tensors);

/// Bytes of the target's own memory that this thread's device has held
/// at most since resetDevicePeak() (CUDA: blocks in use in the GPU's
/// caching allocator), or -1 where the program's buffers are host memory
/// (Run.cpp then counts the process's allocations).
double devicePeakBytes();
void resetDevicePeak();

/// `--profile-kernels`: starts timing this thread's device work by kernel;
/// printKernelProfile writes what it measured over `steps` steps that
/// took `wallSeconds` to stderr. startKernelProfile returns what is wrong
/// where the target has no kernels to time (the CPU), else "".
std::string startKernelProfile();
void printKernelProfile(int64_t rank, int64_t steps, double wallSeconds);

/// What both targets' invoke share (Run.cpp): calls `entry` on the
/// arguments' memref `descriptors` and returns the descriptors of the
/// results it returned (those not written in place), one after another:
/// allocated and aligned pointers, offset, sizes, strides.
std::vector<int64_t> callEntry(Entry entry, const Program &program,
                               int64_t stage,
                               std::vector<std::vector<int64_t>> &descriptors);

/// `invoke` where the program's buffers are not the host's
/// (DeviceCopies.cpp): the arguments are copied to `memory`, except those
/// `mirror` holds; the parameters and state the step writes in place or
/// returns anew stay there, in `mirror`; the other results come back to
/// new host tensors (or, inside an argument, to its host buffer).
std::vector<HostTensor> invokeOnCopies(Entry entry, const Program &program,
                                       int64_t stage,
                                       const std::vector<HostTensor> &args,
                                       DeviceMirror::Device &memory,
                                       DeviceMirror &mirror);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_TARGET_H
