//===- Program.h - what a compiled program takes and returns ----*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). `ober-compile` describes the
// function it compiled in a manifest (JSON, embedded in the executable as
// `ober_program_manifest`): each argument's role, name, element type and
// shape, how an untrained parameter is initialized, what each result is,
// and the library kernels it calls. The executable's main reads it; the
// compiler writes it with the same code, so the two cannot disagree.
//
// A partitioned program runs on the devices of a grid: its arguments and
// results are each device's blocks (`split`), and with pipeline stages
// each stage has its own function, all taking and returning the same
// values (each result comes from the stage that computes it).
//
// The compiled functions are `ober_program_entries[stage]`, each taking
// `void **args`: args[0] points at the results it returns (memref
// descriptors, one after another; a result written into an argument's
// buffer is not returned), then one pointer per argument to its memref
// descriptor (MLIR's C interface).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_PROGRAM_H
#define OBER_RUNTIME_PROGRAM_H

#include "ober/Runtime/DType.h"
#include "ober/Runtime/Grid.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ober::rt {

/// What an argument of the compiled function is.
enum class ArgRole {
  Parameter,    // trained weights, read from the weights file or initialized
  State,        // optimizer state (and step counters), zero at the start
  Batch,        // a training input (`--input`, in order)
  LearningRate, // a scalar, `--lr`
  Input,        // an inference input (`--input`, in order)
};

/// How a parameter without weights starts (ober/Runtime/Init.h).
enum class InitKind { Normal, Ones, Zeros };

/// The values an integer input may hold where the model reads it as
/// indices (class targets, embedding rows, gathered positions): [low,
/// high), and `ignored` besides when `hasIgnored` (a cross-entropy's
/// ignore_index). Generated code does not check them (an index outside
/// would read another row, or clamp), so the executable does. `use` says
/// what reads them, for errors.
struct IndexRange {
  int64_t low = 0, high = 0;
  bool hasIgnored = false;
  int64_t ignored = 0;
  std::string use;

  /// Whether there is a range to check.
  bool checked() const { return high > low; }
  bool allows(int64_t v) const {
    return (v >= low && v < high) || (hasIgnored && v == ignored);
  }
  /// Empty when every element of the integer buffer (of `dtype` and
  /// `shape`, at `data`) is allowed, else the first one that is not and
  /// its place in `shape`.
  std::string check(DType dtype, const char *data,
                    const std::vector<int64_t> &shape) const;
};

struct ProgramArg {
  ArgRole role = ArgRole::Input;
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  InitKind init = InitKind::Normal;
  /// The parameter's draw key before the seed (a hash of its name).
  uint64_t initKey = 0;
  /// How the global tensor is cut over the grid (`shape` is one block).
  Split split;
  /// The pipeline stages whose functions read it, other than to return it
  /// unchanged as its new value (empty: every stage).
  std::vector<int64_t> readBy;
  /// For an integer input read as indices, the values allowed
  /// (`indices.checked()`).
  IndexRange indices;

  bool isReadBy(int64_t stage) const;
};

/// What a result of the compiled function is.
enum class ResultRole {
  Parameter, // the new value of argument `arg`
  State,     // the new value of argument `arg`
  Loss,      // the step's loss (a scalar)
  GradNorm,  // the global gradient norm (a scalar; steps built with it)
  Output,    // an inference output
};

struct ProgramResult {
  ResultRole role = ResultRole::Output;
  int64_t arg = -1;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Per stage, the argument whose buffer that stage's function wrote this
  /// result into (it then does not return it), or -1.
  std::vector<int64_t> inPlace;
  Split split;
  /// The pipeline stage that computes it (-1: every stage).
  int64_t stage = -1;

  int64_t inPlaceIn(int64_t s) const {
    return s < static_cast<int64_t>(inPlace.size()) ? inPlace[s] : -1;
  }
};

/// A library kernel the program calls (ober/Runtime/CPUKernels.h), with
/// the descriptor of one of its uses; the executable creates each before
/// the first step.
struct ProgramKernel {
  std::string name;
  std::vector<int64_t> desc;
};

struct Program {
  enum Kind { Train, Inference } kind = Train;
  /// The model the program was compiled from, for messages.
  std::string model;
  /// The weights file beside the executable ("" when parameters start
  /// from `--init-seed`).
  std::string weights;
  std::vector<ProgramArg> args;
  std::vector<ProgramResult> results;
  std::vector<ProgramKernel> kernels;
  /// The device grid (empty: one device), the grid axis of pipeline stages
  /// (-1: none) and the number of stage functions.
  std::vector<int64_t> grid;
  int64_t pipelineAxis = -1;
  int64_t stages = 1;
  /// The grid axes of each group kind the collectives use (a collective's
  /// descriptor indexes this list).
  std::vector<std::vector<int64_t>> groups;
  /// The (sending, receiving) stage pairs of the pipeline transfers, in
  /// order, each once (empty: none).
  std::vector<std::pair<int64_t, int64_t>> transfers;
  /// Local SGD: the steps the replicas along grid axis `replicaAxis` take
  /// apart between averages of their parameters (1: none).
  int64_t localSteps = 1;
  int64_t replicaAxis = -1;
  /// Samples in one step over every replica, and tokens per sample when
  /// the first batch input holds token ids (0 otherwise): the throughput
  /// a run reports.
  int64_t samplesPerStep = 0, tokensPerSample = 0;
  /// From the plan (0 when unplanned): the model's FLOPs per step, one
  /// device's peak FLOP/s at the plan's precision, and the predicted step
  /// time and MFU; a run's measured MFU is set against them.
  double modelFlops = 0, peakFlops = 0, predictedStepTime = 0,
         predictedMfu = 0;
  /// The plan's peak memory of one device, bytes (0 when unplanned).
  double predictedPeakMemory = 0;

  /// Indices of the arguments with `role`, in order.
  std::vector<size_t> argsWith(ArgRole role) const;
  /// Whether a result has `role`.
  bool returns(ResultRole role) const;
  /// Whether the function of `stage` touches argument `i`: reads it, or
  /// computes its new value, or returns it in a new buffer (a copy).
  bool touches(int64_t stage, size_t i) const;
  /// The devices the program runs on.
  int64_t devices() const;
};

/// The manifest's JSON text.
std::string writeProgram(const Program &program);
/// Parses and checks a manifest; on failure returns false with `error`.
bool readProgram(const std::string &text, Program &out, std::string &error);

/// Elements of a shape.
int64_t elementCount(const std::vector<int64_t> &shape);
/// `[2, 3]`, for messages.
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace ober::rt

#endif // OBER_RUNTIME_PROGRAM_H
