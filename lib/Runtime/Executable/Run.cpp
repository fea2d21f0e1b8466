//===- Run.cpp - training and inference with a compiled program ------------===//
//
// Part of Ober-Train's runtime (no MLIR). The training loop mirrors the
// interpreter's (lib/Tools/TrainLoop.cpp): parameters from the weights file
// or drawn from the seed (ober/Runtime/Init.h), optimizer state at zero,
// batches by the rule of ober/Runtime/Batches.h, and one line per step in
// the same format.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "Allocations.h"
#include "Checkpoint.h"
#include "DataFeed.h"
#include "LocalSGD.h"

#include "ober/Runtime/Batches.h"
#include "ober/Runtime/Files.h"
#include "ober/Runtime/Tracking.h"
#include "ober/Runtime/Init.h"
#include "ober/Runtime/Weights.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

using namespace ober::rt;

namespace {

/// An error for the user: what is wrong, naming the file or option.
struct Failure {
  std::string message;
};

/// The directory of this executable (for the weights compiled beside it).
std::string executableDir() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0)
    return ".";
  std::string p(path, n);
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}


/// The global shape of argument `a` on `where`'s grid.
std::vector<int64_t> globalShapeOf(const ProgramArg &a,
                                   const Placement &where) {
  return globalShape(a.shape, a.split, where.grid);
}

/// A stand-in for an argument the rank's stage never touches (another
/// stage's parameter or state): its shape for the descriptor over one
/// element of storage.
HostTensor standIn(const ProgramArg &a) {
  HostTensor one(a.dtype, {1});
  return HostTensor::share(one, a.dtype, a.shape, one.data());
}

/// "float32 [8, 3]": the argument's type as the user's files hold it.
std::string describe(const ProgramArg &a, const Placement &where) {
  return std::string(dtypeName(a.dtype)) + " " +
         shapeText(globalShapeOf(a, where));
}

/// Copies `where`'s block of global tensors of one shape into local ones.
struct BlockCopy {
  std::vector<int64_t> offsets; // empty: the whole tensor
  BlockCopy(const std::vector<int64_t> &local, const Split &split,
            const Placement &where) {
    if (!split.isWhole())
      offsets = blockOffsets(local, split, where.grid, where.coords);
  }
  /// The block of `global`: `global` itself when whole.
  HostTensor operator()(const HostTensor &global,
                        const std::vector<int64_t> &local) const {
    if (offsets.empty())
      return global;
    HostTensor out(global.dtype(), local);
    size_t e = dtypeSize(global.dtype());
    for (size_t i = 0; i < offsets.size(); ++i)
      std::memcpy(out.data() + i * e, global.data() + offsets[i] * e, e);
    return out;
  }
  /// Writes `local` into its place in `global`.
  void place(const HostTensor &local, HostTensor &global) const {
    size_t e = dtypeSize(global.dtype());
    if (offsets.empty()) {
      std::memcpy(global.data(), local.data(), global.byteSize());
      return;
    }
    for (size_t i = 0; i < offsets.size(); ++i)
      std::memcpy(global.data() + offsets[i] * e, local.data() + i * e, e);
  }
};

/// Draws `t`'s elements as parameter `a`'s initialization with `seed`.
/// Each element depends only on its index, so threads draw a range each
/// (a 1.3B-parameter model draws in seconds, not a minute).
void drawInitial(HostTensor &t, const ProgramArg &a, uint64_t seed) {
  constexpr int64_t kPerThread = int64_t(1) << 22;
  int64_t n = elementCount(t.shape());
  auto draw = [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k)
      storeFloat(t, k, initialValue(a.init, a.initKey, seed, k));
  };
  int64_t threads = std::min<int64_t>(
      std::max(1u, std::thread::hardware_concurrency()),
      (n + kPerThread - 1) / kPerThread);
  if (threads <= 1)
    return draw(0, n);
  std::vector<std::thread> workers;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t begin = 0; begin < n; begin += chunk)
    workers.emplace_back(draw, begin, std::min(n, begin + chunk));
  for (std::thread &w : workers)
    w.join();
}

/// The parameters (global tensors): read from `path` (every one must be
/// there), or drawn.
std::map<size_t, HostTensor> loadParameters(const Program &program,
                                            const std::string &path,
                                            uint64_t seed,
                                            const Placement &where) {
  std::map<size_t, HostTensor> params;
  std::vector<size_t> indices;
  for (size_t i : program.argsWith(ArgRole::Parameter))
    if (program.touches(where.stage, i))
      indices.push_back(i);
  if (path.empty()) {
    for (size_t i : indices) {
      const ProgramArg &a = program.args[i];
      std::vector<int64_t> shape = globalShapeOf(a, where);
      HostTensor t(a.dtype, shape);
      drawInitial(t, a, seed);
      params[i] = std::move(t);
    }
    return params;
  }
  WeightsFile file;
  std::string error;
  if (!file.open(path, error))
    throw Failure{error};
  std::string missing;
  for (size_t i : indices) {
    const ProgramArg &a = program.args[i];
    const WeightInfo *info = file.find(a.name);
    if (!info) {
      missing += " '" + a.name + "'";
      continue;
    }
    std::vector<int64_t> shape = globalShapeOf(a, where);
    if (info->shape != shape)
      throw Failure{path + ": parameter '" + a.name + "' has shape " +
                    shapeText(info->shape) + ", the model expects " +
                    describe(a, where)};
    NpyArray array;
    array.type = info->dtype;
    array.shape = info->shape;
    if (!file.read(*info, array.data, error))
      throw Failure{error};
    HostTensor t;
    if (!tensorFromArray(array, a.dtype, t, error))
      throw Failure{path + ": parameter '" + a.name + "' " + error};
    params[i] = std::move(t);
  }
  if (!missing.empty())
    throw Failure{path + " lacks parameter(s)" + missing};
  return params;
}

/// The weights file to read; empty to draw the parameters from the seed
/// (no weights compiled in, or `--weights none`).
std::string weightsPath(const Program &program, const Options &options) {
  if (options.weights == "none")
    return "";
  if (!options.weights.empty())
    return options.weights;
  if (program.weights.empty())
    return "";
  return executableDir() + "/" + program.weights;
}

/// Throws, naming `what`, where `t` holds a value the model cannot read as
/// the indices argument `a` is (ProgramArg::indices).
void checkIndices(const ProgramArg &a, const HostTensor &t,
                  const std::string &what) {
  if (!a.indices.checked())
    return;
  if (std::string why = a.indices.check(t.dtype(), t.data(), t.shape());
      !why.empty())
    throw Failure{what + ": " + why};
}

/// The `--input` files for the arguments of `role`, checked against their
/// global shapes (`training`: by the batch rule, else exactly).
std::vector<HostTensor> readInputs(const Program &program,
                                   const Options &options, ArgRole role,
                                   const Placement &where = Placement()) {
  std::vector<size_t> indices = program.argsWith(role);
  if (options.inputs.size() != indices.size()) {
    std::string expected;
    for (size_t i : indices)
      expected += "\n  " + program.args[i].name + ": " +
                  describe(program.args[i], where);
    throw Failure{"expects " + std::to_string(indices.size()) +
                  " --input file(s), got " +
                  std::to_string(options.inputs.size()) + ":" + expected};
  }
  std::vector<HostTensor> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    const ProgramArg &a = program.args[indices[k]];
    const std::string &path = options.inputs[k];
    // Numbered as the user gave them, from 1.
    std::string error, what = "--input " + std::to_string(k + 1) + " (" + path +
                              ") for '" + a.name + "'";
    NpyArray array;
    if (!readNpy(path, array, error))
      throw Failure{error};
    std::vector<int64_t> shape = globalShapeOf(a, where);
    bool fits = role == ArgRole::Batch
                    ? batchLayout(array.shape, shape) != BatchLayout::Mismatch
                    : array.shape == shape;
    if (!fits)
      throw Failure{what + " has shape " + shapeText(array.shape) +
                    ", expected " + describe(a, where) +
                    (role == ArgRole::Batch
                         ? " (or a leading steps dimension, or its "
                           "micro-batches merged)"
                         : "")};
    HostTensor t;
    if (!tensorFromArray(array, a.dtype, t, error))
      throw Failure{what + " " + error};
    checkIndices(a, t, what);
    out.push_back(std::move(t));
  }
  return out;
}

/// Step times for --timing.
struct Clock {
  std::vector<double> seconds;
  std::chrono::steady_clock::time_point start;
  void begin() { start = std::chrono::steady_clock::now(); }
  void end() {
    seconds.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
  }
  void print() const {
    if (seconds.empty())
      return;
    double later = 0;
    for (size_t i = 1; i < seconds.size(); ++i)
      later += seconds[i];
    std::fprintf(stderr, "timing: first step %.6f s", seconds[0]);
    if (seconds.size() > 1)
      std::fprintf(stderr, ", later steps %.6f s each (mean of %zu)",
                   later / (seconds.size() - 1), seconds.size() - 1);
    std::fprintf(stderr, "\n");
  }
};

void printTensor(const HostTensor &t) {
  int64_t n = elementCount(t.shape());
  const auto &shape = t.shape();
  std::printf("%s %s = ", dtypeName(t.dtype()), shapeText(shape).c_str());
  int64_t i = 0;
  std::function<void(size_t)> rec = [&](size_t dim) {
    if (dim == shape.size()) {
      DType d = t.dtype();
      const char *p = t.data() + i * dtypeSize(d);
      ++i;
      if (d == DType::F32 || d == DType::F64 || d == DType::BF16 ||
          d == DType::F16) {
        std::printf("%.9g", loadFloat(t, i - 1));
      } else if (d == DType::Bool || d == DType::U8 || d == DType::I8) {
        std::printf("%d", d == DType::I8 ? int(*reinterpret_cast<const int8_t *>(p))
                                         : int(*reinterpret_cast<const uint8_t *>(p)));
      } else {
        int64_t v = 0;
        std::memcpy(&v, p, dtypeSize(d));
        if (dtypeSize(d) < 8 && (v >> (8 * dtypeSize(d) - 1)) & 1)
          v -= int64_t(1) << (8 * dtypeSize(d));
        std::printf("%lld", static_cast<long long>(v));
      }
      return;
    }
    std::printf("[");
    for (int64_t k = 0; k < shape[dim]; ++k) {
      if (k)
        std::printf(", ");
      rec(dim + 1);
    }
    std::printf("]");
  };
  if (n)
    rec(0);
  std::printf("\n");
}

} // namespace

std::vector<int64_t>
ober::rt::callEntry(Entry entry, const Program &program, int64_t stage,
                    std::vector<std::vector<int64_t>> &descriptors) {
  size_t words = 0;
  for (const ProgramResult &r : program.results)
    if (r.inPlaceIn(stage) < 0)
      words += 3 + 2 * r.shape.size();
  std::vector<int64_t> results(std::max<size_t>(words, 1), 0);
  std::vector<void *> packed = {results.data()};
  for (std::vector<int64_t> &d : descriptors)
    packed.push_back(d.data());
  entry(packed.data());
  return results;
}

namespace {
/// Tags of the runtime's own transfers (the program's are small).
constexpr int64_t kLossTag = 1 << 20, kParamTag = kLossTag + 1,
                  kStageTag = kLossTag + 2, kGradNormTag = kLossTag + 3;

/// Sends (or receives) `t` to (from) `peer` on `where`'s channel.
void transfer(const Placement &where, bool send, int64_t peer, int64_t tag,
              HostTensor &t) {
  CollectiveDesc d = where.overWorld(send ? OBER_COLL_SEND : OBER_COLL_RECV,
                                     t.dtype(), t.shape());
  d.tag = tag;
  d.peer = where.grid.coordinates(peer);
  where.channel->run(d, t.data(), t.data());
}

/// The rank at the origin of every axis but the pipeline's, at `stage`.
int64_t stageLeader(const Program &program, const Placement &where,
                    int64_t stage) {
  std::vector<int64_t> coords(where.grid.shape().size(), 0);
  if (program.pipelineAxis >= 0 && stage >= 0)
    coords[program.pipelineAxis] = stage;
  return where.grid.rankAt(coords);
}

/// The stages other than the one that computes `res` that read the
/// argument it updates (a tied weight's other stage).
std::vector<int64_t> otherReaders(const Program &program,
                                  const ProgramResult &res) {
  std::vector<int64_t> stages;
  for (int64_t t = 0; t < program.stages; ++t)
    if (t != res.stage && program.args[res.arg].isReadBy(t))
      stages.push_back(t);
  return stages;
}

/// Hands each updated parameter and state block from the stage that
/// computed it to the other stages that read it (the rank at the same
/// coordinates on the other axes), in result order.
void shareAcrossStages(const Program &program, const Placement &where,
                       std::vector<HostTensor> &args) {
  if (program.pipelineAxis < 0)
    return;
  // What this stage sends leaves from the host; the rest stays on the
  // device.
  std::vector<HostTensor> sent;
  for (const ProgramResult &res : program.results)
    if (res.arg >= 0 && res.stage == where.stage &&
        !otherReaders(program, res).empty())
      sent.push_back(args[res.arg]);
  syncToHost(sent);
  for (const ProgramResult &res : program.results) {
    if (res.arg < 0 || res.stage < 0)
      continue;
    const ProgramArg &a = program.args[res.arg];
    auto rankAt = [&](int64_t stage) {
      std::vector<int64_t> c = where.coords;
      c[program.pipelineAxis] = stage;
      return where.grid.rankAt(c);
    };
    if (where.stage == res.stage) {
      for (int64_t t : otherReaders(program, res))
        transfer(where, /*send=*/true, rankAt(t), kStageTag, args[res.arg]);
    } else if (a.isReadBy(where.stage)) {
      HostTensor fresh(a.dtype, a.shape);
      transfer(where, /*send=*/false, rankAt(res.stage), kStageTag, fresh);
      args[res.arg] = fresh;
    }
  }
}

/// The step's scalar result of `role` (the loss, the gradient norm) at
/// rank 0, sent there from the stage that computes it under `tag`; NaN
/// elsewhere and when the step has none.
double scalarAtRankZero(const Program &program, const Placement &where,
                        const std::vector<HostTensor> &results,
                        ResultRole role, int64_t tag) {
  for (size_t r = 0; r < results.size(); ++r) {
    const ProgramResult &res = program.results[r];
    if (res.role != role)
      continue;
    int64_t from = stageLeader(program, where, res.stage);
    if (from == 0)
      return where.rank == 0 ? loadFloat(results[r], 0) : NAN;
    HostTensor value = results[r];
    if (where.rank == from)
      transfer(where, /*send=*/true, 0, tag, value);
    if (where.rank != 0)
      return NAN;
    HostTensor got(res.dtype, res.shape);
    transfer(where, /*send=*/false, from, tag, got);
    return loadFloat(got, 0);
  }
  return NAN;
}

/// Writes every parameter as DIR/<name>.npy from rank 0, each assembled
/// from the blocks of the ranks that hold it.
void saveParameters(const Program &program, const Options &options,
                    const Placement &where,
                    const std::vector<HostTensor> &args) {
  if (where.rank == 0 && !makeDirectories(options.saveParams))
    throw Failure{"cannot create " + options.saveParams};
  for (const ProgramResult &res : program.results) {
    if (res.role != ResultRole::Parameter)
      continue;
    const ProgramArg &a = program.args[res.arg];
    HostTensor global;
    if (where.rank == 0)
      global = HostTensor(a.dtype, globalShapeOf(a, where));
    for (int64_t r = 0; r < where.grid.size(); ++r) {
      if (!ownsBlock(program, where, r, a.split, res.stage))
        continue;
      if (r == where.rank && r != 0) {
        HostTensor mine = args[res.arg];
        transfer(where, /*send=*/true, 0, kParamTag, mine);
      } else if (where.rank == 0) {
        HostTensor block = args[res.arg];
        if (r != 0) {
          block = HostTensor(a.dtype, a.shape);
          transfer(where, /*send=*/false, r, kParamTag, block);
        }
        Placement at = Placement::of(program, r);
        BlockCopy(a.shape, a.split, at).place(block, global);
      }
    }
    if (where.rank != 0)
      continue;
    std::string error, path = options.saveParams + "/" + a.name + ".npy";
    if (!writeNpy(path, arrayOf(global), error))
      throw Failure{error};
  }
}
} // namespace

int ober::rt::reportError(const std::string &self, const std::string &message,
                          int code) {
  std::fprintf(stderr, "%s: error: %s\n", self.c_str(), message.c_str());
  std::fflush(stderr);
  return code;
}

bool ober::rt::ownsBlock(const Program &program, const Placement &where,
                         int64_t rank, const Split &split, int64_t stage) {
  std::vector<int64_t> c = where.grid.coordinates(rank);
  for (size_t a = 0; a < c.size(); ++a) {
    if (static_cast<int64_t>(a) == program.pipelineAxis)
      continue;
    bool splitHere = false;
    for (int64_t s : split.axes)
      splitHere |= s == static_cast<int64_t>(a);
    if (!splitHere && c[a] != 0)
      return false;
  }
  return program.pipelineAxis < 0 || stage < 0 ||
         c[program.pipelineAxis] == stage;
}

int64_t ober::rt::ownerStage(const Program &program, size_t arg) {
  for (const ProgramResult &r : program.results)
    if (r.arg == static_cast<int64_t>(arg))
      return r.stage;
  return -1;
}

std::vector<int64_t> Placement::allAxes() const {
  std::vector<int64_t> axes(grid.shape().size());
  for (size_t a = 0; a < axes.size(); ++a)
    axes[a] = static_cast<int64_t>(a);
  return axes;
}

CollectiveDesc Placement::overWorld(int64_t kind, DType dtype,
                                    std::vector<int64_t> shape) const {
  CollectiveDesc d;
  d.kind = kind;
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.group = worldGroup;
  d.gridAxes = allAxes();
  return d;
}

Placement Placement::of(const Program &program, int64_t rank) {
  Placement p;
  if (program.grid.empty())
    return p;
  p.grid = Grid(program.grid);
  p.rank = rank;
  p.coords = p.grid.coordinates(rank);
  p.stage = program.pipelineAxis >= 0 ? p.coords[program.pipelineAxis] : 0;
  p.worldGroup = static_cast<int64_t>(program.groups.size());
  if (program.localSteps > 1)
    p.replicaGroup = p.worldGroup + 1;
  return p;
}

namespace {
/// The arguments before the first step: parameters (this rank's blocks),
/// zero optimizer state, stand-ins for what the stage never touches, and
/// the learning rate's buffer.
/// Refuses a program whose arguments at this rank (its blocks of the
/// parameters, optimizer state and batches) do not fit the memory the
/// process can get, before any is allocated.
void checkArgumentMemory(const Program &program, const Placement &where) {
  uint64_t total = 0, largest = 0;
  const ProgramArg *big = nullptr;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const ProgramArg &a = program.args[i];
    if (!program.touches(where.stage, i))
      continue;
    uint64_t bytes =
        checkedBytes(a.shape, dtypeSize(a.dtype)).value_or(~uint64_t(0) >> 1);
    total = std::min(total + bytes, ~uint64_t(0) >> 1);
    if (bytes > largest) {
      largest = bytes;
      big = &a;
    }
  }
  int64_t available = availableHostBytes();
  if (!big || total <= static_cast<uint64_t>(available))
    return;
  auto gib = [](double b) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", b / (1 << 30));
    return std::string(text);
  };
  throw Failure{"rank " + std::to_string(where.rank) + " needs " +
                gib(double(total)) +
                " GiB for its parameters, optimizer state and batches (the "
                "largest, '" + big->name + "', " + gib(double(largest)) +
                " GiB); this machine has " + gib(double(available)) +
                " GiB available: use more devices (a plan with more "
                "tensor or pipeline parallelism, or ZeRO)"};
}

std::vector<HostTensor> initialArguments(const Program &program,
                                         const Options &options,
                                         const Placement &where) {
  checkArgumentMemory(program, where);
  std::vector<HostTensor> args(program.args.size());
  for (auto &[i, t] : loadParameters(program, weightsPath(program, options),
                                     options.initSeed, where)) {
    const ProgramArg &a = program.args[i];
    args[i] = BlockCopy(a.shape, a.split, where)(t, a.shape);
  }
  for (size_t i : program.argsWith(ArgRole::State))
    args[i] = HostTensor(program.args[i].dtype, program.args[i].shape);
  // A pipeline stage holds only what its function touches.
  for (size_t i = 0; i < args.size(); ++i)
    if (!program.touches(where.stage, i))
      args[i] = standIn(program.args[i]);
  for (size_t i : program.argsWith(ArgRole::LearningRate))
    args[i] = HostTensor(program.args[i].dtype, program.args[i].shape);
  return args;
}

/// With --resume, the state of the newest checkpoint; the steps it holds.
/// A checkpoint of another data set is refused.
int64_t resumeFrom(const Program &program, const Options &options,
                   const Placement &where, std::vector<HostTensor> &args,
                   LocalSGD &local, const std::string &data) {
  if (!options.resume)
    return 0;
  std::string error;
  std::map<std::string, std::string> extra;
  std::vector<SideState> side = local.sideState();
  int64_t start = loadCheckpoint(program, where, options.checkpointDir, args,
                                 side, extra, error);
  if (start > 0)
    local.anchorAt(args);
  local.restore(side);
  if (start < 0)
    throw Failure{error};
  auto saved = extra.find("data");
  if (start > 0 && !data.empty() && saved != extra.end() &&
      saved->second != data)
    throw Failure{options.checkpointDir + ": the checkpoint was trained on " +
                  saved->second + "; --data " + options.data + " is " + data};
  if (where.rank == 0)
    std::fprintf(stderr, "%s\n",
                 (start ? "resuming after step " + std::to_string(start - 1) +
                              " from " + options.checkpointDir
                        : "no complete checkpoint in " + options.checkpointDir +
                              ": starting at step 0")
                     .c_str());
  return start;
}

/// After step `s`: a checkpoint when due or when any rank was asked to
/// stop (SIGTERM, SIGUSR1); whether to stop now.
bool checkpointAfter(int64_t s, const Program &program, const Options &options,
                     const Placement &where,
                     const std::vector<HostTensor> &args,
                     const LocalSGD &local, const std::string &data,
                     CheckpointWriter &writer) {
  if (options.checkpointDir.empty())
    return false;
  bool last = s + 1 == options.steps;
  bool due = last ||
             (options.checkpointEvery && (s + 1) % options.checkpointEvery == 0);
  bool stop = !allRanks(where, !stopRequested()) && !last;
  std::string error;
  // A save still being written commits once every rank has written it.
  if (!writer.finish(where, /*wait=*/last || stop, error))
    throw Failure{error};
  std::map<std::string, std::string> extra = {
      {"samples", std::to_string((s + 1) * program.samplesPerStep)}};
  if (!data.empty())
    extra["data"] = data;
  bool async = options.checkpointAsync && !last && !stop;
  if (due || stop)
    syncToHost(args);
  if ((due || stop) &&
      !writer.start(program, where, options.checkpointDir, s + 1,
                    options.keep, args, local.sideState(), extra, async,
                    error))
    throw Failure{error};
  if (stop && where.rank == 0)
    std::fprintf(stderr,
                 "stopped after step %lld on a signal; resume from %s with "
                 "--resume\n",
                 static_cast<long long>(s), options.checkpointDir.c_str());
  return stop;
}

/// Rank 0's tracking run: its parameters are the model, the plan's grid and
/// the training options.
void startTracking(Tracker &tracker, const Program &program,
                   const Options &options, const Placement &where,
                   int64_t start, const std::string &self) {
  if (options.logDir.empty() || where.rank != 0)
    return;
  std::string grid;
  for (int64_t d : program.grid)
    grid += (grid.empty() ? "" : "x") + std::to_string(d);
  std::map<std::string, std::string> params = {
      {"model", program.model},
      {"grid", grid.empty() ? "1" : grid},
      {"steps", std::to_string(options.steps)},
      {"lr", std::to_string(options.lr.peak)},
      {"lr_schedule", lrScheduleName(options.lr.kind)},
      {"warmup_steps", std::to_string(options.lr.warmup)},
      {"min_lr", std::to_string(options.lr.min)},
      {"init_seed", std::to_string(options.initSeed)},
      {"samples_per_step", std::to_string(program.samplesPerStep)}};
  std::string name = options.runName;
  if (name.empty()) {
    size_t slash = self.rfind('/');
    name = slash == std::string::npos ? self : self.substr(slash + 1);
  }
  std::string error;
  if (!tracker.open(options.logDir, name, params, start, error))
    throw Failure{error};
}

/// Bytes this process has held at most (its resident set's peak).
double peakResidentBytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<double>(usage.ru_maxrss) * 1024; // KiB on Linux
}

/// Bytes this process holds now (its resident set).
double residentBytes() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE);
}

/// What the process holds now: its allocations where they are counted
/// (Allocations.h), else its resident set.
double heldBytes() {
  return allocationsCounted() ? static_cast<double>(liveBytes())
                              : residentBytes();
}

/// Bytes one device's training holds at most: the device's own memory
/// where the target has it (Target.h), else the process's peak beyond
/// what it held when training started (the program, the libraries, the
/// runtime), shared among the ranks that are its threads.
double trainingPeakBytes(double heldBefore, int64_t ranksHere) {
  if (double device = devicePeakBytes(); device >= 0)
    return device;
  double peak = allocationsCounted() ? static_cast<double>(peakLiveBytes())
                                     : peakResidentBytes();
  return std::max(0.0, peak - heldBefore) /
         static_cast<double>(std::max<int64_t>(1, ranksHere));
}

/// A step's metrics, for tracking and the progress line.
struct StepMetrics {
  double loss = 0, lr = 0, seconds = 0, throughput = 0;
  /// The global gradient norm, when the step returns it.
  std::optional<double> gradNorm;
  /// Against the plan's model FLOPs and device peak, and the plan's
  /// predictions (-1 when unplanned); the peak memory of a device so far.
  double mfu = -1, mfuPredicted = -1, secondsPredicted = -1, peakMemory = -1,
         peakMemoryPredicted = -1;

  StepMetrics(const Program &program, const Options &options, int64_t s,
              double loss, double seconds, double peakBytes)
      : loss(loss), lr(options.lr.at(s)), seconds(seconds) {
    double units =
        static_cast<double>(program.samplesPerStep) *
        static_cast<double>(std::max<int64_t>(1, program.tokensPerSample));
    throughput = seconds > 0 ? units / seconds : 0;
    if (program.modelFlops > 0 && program.peakFlops > 0 && seconds > 0) {
      mfu = program.modelFlops /
            (seconds * static_cast<double>(program.devices()) *
             program.peakFlops);
      mfuPredicted = program.predictedMfu;
      secondsPredicted = program.predictedStepTime;
      peakMemory = peakBytes;
      peakMemoryPredicted = program.predictedPeakMemory;
    }
  }

  /// By the tracking keys.
  std::vector<std::pair<std::string, double>> values() const {
    std::vector<std::pair<std::string, double>> v = {
        {"loss", loss},
        {"lr", lr},
        {"step_time", seconds},
        {"throughput", throughput}};
    if (gradNorm)
      v.push_back({"grad_norm", *gradNorm});
    if (mfu >= 0) {
      v.push_back({"mfu", mfu});
      v.push_back({"mfu_predicted", mfuPredicted});
      v.push_back({"step_time_predicted", secondsPredicted});
      v.push_back({"peak_memory", peakMemory});
      v.push_back({"peak_memory_predicted", peakMemoryPredicted});
    }
    return v;
  }
};

/// On a terminal, rank 0 keeps one progress line on stderr.
void showProgress(const Program &program, const Options &options, int64_t s,
                  const StepMetrics &m) {
  static const bool terminal = isatty(STDERR_FILENO);
  if (!terminal)
    return;
  double eta = m.seconds * static_cast<double>(options.steps - s - 1);
  std::fprintf(stderr,
               "\r  step %lld/%lld  loss %.5g  %.4g %s/s  ETA %lld:%02lld ",
               static_cast<long long>(s + 1),
               static_cast<long long>(options.steps), m.loss, m.throughput,
               program.tokensPerSample ? "tokens" : "samples",
               static_cast<long long>(eta) / 60,
               static_cast<long long>(eta) % 60);
  if (s + 1 == options.steps)
    std::fprintf(stderr, "\n");
}

/// The largest of every rank's training peak (the plan's peak memory is
/// its stages' largest): a maximum over the world, as allRanks agrees.
double peakOverRanks(const Placement &where, double mine) {
  if (!where.channel)
    return mine;
  double peak = 0;
  CollectiveDesc d = where.overWorld(OBER_COLL_ALL_REDUCE, DType::F64, {1});
  d.reduction = OBER_REDUCE_MAX;
  where.channel->run(d, &mine, &peak);
  return peak;
}

/// Rank 0's closing summary: the measured step time (median of the steps
/// after the first, which creates kernels), MFU and the fullest device's
/// peak memory next to the plan's predictions (tracking logs them with
/// every step).
void summarize(const Program &program, const std::vector<double> &seconds,
               double peakBytes) {
  if (program.predictedStepTime <= 0 || seconds.empty())
    return;
  std::vector<double> later(seconds.begin() + (seconds.size() > 1),
                            seconds.end());
  std::nth_element(later.begin(), later.begin() + later.size() / 2,
                   later.end());
  double step = later[later.size() / 2];
  double mfu = program.modelFlops /
               (step * static_cast<double>(program.devices()) *
                program.peakFlops);
  double memory = peakBytes;
  auto ratio = [](double measured, double predicted) {
    return predicted > 0 ? measured / predicted : 0.0;
  };
  std::fprintf(stderr,
               "measured vs predicted: step %.4g s vs %.4g s (x%.3f), MFU "
               "%.2f%% vs %.2f%%, peak memory per device %.4g MiB vs %.4g MiB "
               "(x%.3f)\n",
               step, program.predictedStepTime,
               ratio(step, program.predictedStepTime), 100 * mfu,
               100 * program.predictedMfu, memory / (1 << 20),
               program.predictedPeakMemory / (1 << 20),
               ratio(memory, program.predictedPeakMemory));
}

/// One replica's collectives per step (the ranks at 0 on every axis but
/// the pipeline's), as the planner's report counts them.
void printTraffic(const Program &program, const Options &options,
                  const Placement &where) {
  Channel *code = where.programChannel ? where.programChannel : where.channel;
  if (!code || options.steps <= 0 ||
      !ownsBlock(program, where, where.rank, Split(), where.stage))
    return;
  std::string line;
  for (auto &[kind, bytes] : code->traffic())
    line += ", " + kind + " " + std::to_string(bytes / options.steps);
  std::fprintf(stderr, "traffic: rank %lld, bytes per step%s\n",
               static_cast<long long>(where.rank),
               line.empty() ? ": none" : line.c_str());
}
} // namespace

int ober::rt::train(Entry entry, const Program &program, const Options &options,
                    const std::string &self, const Placement &where) {
  Tracker tracker;
  double residentBefore = heldBytes();
  // Once per process (its ranks are consecutive): the peak from here on.
  if (where.rank % std::max<int64_t>(1, where.ranksInProcess) == 0)
    resetPeakLiveBytes();
  resetDevicePeak();
  if (options.profileKernels)
    if (std::string wrong = startKernelProfile(); !wrong.empty())
      return reportError(self, wrong);
  try {
    std::vector<HostTensor> args = initialArguments(program, options, where);
    std::vector<size_t> lrArgs = program.argsWith(ArgRole::LearningRate);
    std::vector<size_t> batchArgs = program.argsWith(ArgRole::Batch);
    DataFeed feed;
    std::string data;
    std::vector<HostTensor> files;
    if (!options.data.empty()) {
      std::string error;
      if (!feed.open(program, options, where, error))
        throw Failure{error};
      data = feed.fingerprint();
    } else {
      files = readInputs(program, options, ArgRole::Batch, where);
    }
    std::vector<BlockCopy> batchBlocks;
    for (size_t i : batchArgs)
      batchBlocks.emplace_back(program.args[i].shape, program.args[i].split,
                               where);
    LocalSGD local(program, where, options, args);
    CheckpointWriter writer;
    int64_t start = resumeFrom(program, options, where, args, local, data);
    startTracking(tracker, program, options, where, start, self);
    Clock clock;
    for (int64_t s = start; s < options.steps; ++s) {
      // A batch input this stage never touches keeps its stand-in.
      std::vector<HostTensor> batch;
      if (!data.empty())
        batch = feed.batch(s);
      for (size_t k = 0; k < batchArgs.size(); ++k) {
        if (!program.touches(where.stage, batchArgs[k]))
          continue;
        if (!data.empty()) {
          checkIndices(program.args[batchArgs[k]], batch[k],
                       "--data " + options.data + ", step " +
                           std::to_string(s) + ", input '" +
                           program.args[batchArgs[k]].name + "'");
          args[batchArgs[k]] = batch[k];
          continue;
        }
        const ProgramArg &a = program.args[batchArgs[k]];
        const HostTensor &f = files[k];
        std::vector<int64_t> shape = globalShapeOf(a, where);
        int64_t offset =
            batchOffset(batchLayout(f.shape(), shape), f.shape(), shape, s);
        HostTensor step = HostTensor::share(
            f, a.dtype, shape, f.data() + offset * dtypeSize(a.dtype));
        args[batchArgs[k]] = batchBlocks[k](step, a.shape);
      }
      for (size_t i : lrArgs)
        storeFloat(args[i], 0, options.lr.at(s));
      clock.begin();
      std::vector<HostTensor> results =
          invoke(entry, program, where.stage, args);
      clock.end();
      for (size_t r = 0; r < results.size(); ++r) {
        const ProgramResult &res = program.results[r];
        bool ours = res.stage < 0 || res.stage == where.stage;
        if (res.arg >= 0 && ours)
          args[res.arg] = results[r];
      }
      local.afterStep(s, args);
      shareAcrossStages(program, where, args);
      double loss = scalarAtRankZero(program, where, results,
                                     ResultRole::Loss, kLossTag);
      double gradNorm = scalarAtRankZero(program, where, results,
                                         ResultRole::GradNorm, kGradNormTag);
      if (where.rank == 0) {
        std::printf("step %lld loss %.9g\n", static_cast<long long>(s), loss);
        std::fflush(stdout);
        StepMetrics metrics(
            program, options, s, loss, clock.seconds.back(),
            trainingPeakBytes(residentBefore, where.ranksInProcess));
        if (program.returns(ResultRole::GradNorm))
          metrics.gradNorm = gradNorm;
        tracker.log(s, metrics.values());
        showProgress(program, options, s, metrics);
      }
      if (checkpointAfter(s, program, options, where, args, local, data,
                          writer))
        return 0;
    }
    if (options.timing && where.rank == 0)
      clock.print();
    double peak = trainingPeakBytes(residentBefore, where.ranksInProcess);
    if (program.predictedStepTime > 0)
      peak = peakOverRanks(where, peak);
    if (where.rank == 0)
      summarize(program, clock.seconds, peak);
    if (options.profileKernels) {
      double wall = 0;
      for (double s : clock.seconds)
        wall += s;
      printKernelProfile(where.rank, static_cast<int64_t>(clock.seconds.size()),
                         wall);
    }
    if (options.timing)
      printTraffic(program, options, where);
    if (!options.saveParams.empty()) {
      syncToHost(args);
      saveParameters(program, options, where, args);
    }
    tracker.close(/*finished=*/true);
    return 0;
  } catch (const Failure &f) {
    tracker.close(/*finished=*/false);
    return reportError(self, f.message);
  } catch (const CommError &e) {
    tracker.close(/*finished=*/false);
    return reportError(self, e.what());
  }
}

int ober::rt::infer(Entry entry, const Program &program,
                    const Options &options, const std::string &self) {
  try {
    std::vector<HostTensor> args(program.args.size());
    for (auto &[i, t] :
         loadParameters(program, weightsPath(program, options), 0, Placement()))
      args[i] = std::move(t);
    std::vector<size_t> inputArgs = program.argsWith(ArgRole::Input);
    std::vector<HostTensor> inputs = readInputs(program, options, ArgRole::Input);
    for (size_t k = 0; k < inputArgs.size(); ++k)
      args[inputArgs[k]] = inputs[k];
    Clock clock;
    std::vector<HostTensor> results;
    for (int64_t run = 0; run < options.repeat; ++run) {
      results.clear(); // the last run's outputs are what is kept
      clock.begin();
      results = invoke(entry, program, 0, args);
      clock.end();
    }
    if (options.timing)
      clock.print();
    if (!options.outputDir.empty() && !makeDirectories(options.outputDir))
      throw Failure{"cannot create " + options.outputDir};
    for (size_t r = 0; r < results.size(); ++r) {
      if (options.print) {
        std::printf("result #%zu: ", r);
        printTensor(results[r]);
      }
      if (options.outputDir.empty())
        continue;
      std::string error,
          path = options.outputDir + "/" + std::to_string(r) + ".npy";
      if (!writeNpy(path, arrayOf(results[r]), error))
        throw Failure{error};
    }
    return 0;
  } catch (const Failure &f) {
    return reportError(self, f.message);
  }
}
