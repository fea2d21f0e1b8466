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

#include "ober/Runtime/Batches.h"
#include "ober/Runtime/Init.h"
#include "ober/Runtime/Weights.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <functional>
#include <sys/stat.h>
#include <unistd.h>

using namespace ober::rt;

namespace {

/// An error for the user: what is wrong, naming the file or option.
struct Failure {
  std::string message;
};

int report(const std::string &self, const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", self.c_str(), message.c_str());
  return 1;
}

std::string describe(const ProgramArg &a) {
  return std::string(dtypeName(a.dtype)) + " " + shapeText(a.shape);
}

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

bool makeDirectories(const std::string &path) {
  std::string partial;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    partial = path.substr(0, slash);
    if (!partial.empty())
      mkdir(partial.c_str(), 0777);
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// The parameters: read from `path` (every one must be there), or drawn.
std::map<size_t, HostTensor> loadParameters(const Program &program,
                                            const std::string &path,
                                            uint64_t seed) {
  std::map<size_t, HostTensor> params;
  std::vector<size_t> indices = program.argsWith(ArgRole::Parameter);
  if (path.empty()) {
    for (size_t i : indices) {
      const ProgramArg &a = program.args[i];
      HostTensor t(a.dtype, a.shape);
      for (int64_t k = 0, n = elementCount(a.shape); k < n; ++k)
        storeFloat(t, k, initialValue(a.init, a.initKey, seed, k));
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
    if (info->shape != a.shape)
      throw Failure{path + ": parameter '" + a.name + "' has shape " +
                    shapeText(info->shape) + ", the model expects " +
                    describe(a)};
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

std::string weightsPath(const Program &program, const Options &options) {
  if (!options.weights.empty())
    return options.weights;
  if (program.weights.empty())
    return "";
  return executableDir() + "/" + program.weights;
}

/// The `--input` files for the arguments of `role`, checked against them
/// (`training`: by the batch rule, else exactly).
std::vector<HostTensor> readInputs(const Program &program,
                                   const Options &options, ArgRole role) {
  std::vector<size_t> indices = program.argsWith(role);
  if (options.inputs.size() != indices.size()) {
    std::string expected;
    for (size_t i : indices)
      expected += "\n  " + program.args[i].name + ": " +
                  describe(program.args[i]);
    throw Failure{"expects " + std::to_string(indices.size()) +
                  " --input file(s), got " +
                  std::to_string(options.inputs.size()) + ":" + expected};
  }
  std::vector<HostTensor> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    const ProgramArg &a = program.args[indices[k]];
    const std::string &path = options.inputs[k];
    std::string error, what = "--input #" + std::to_string(k) + " (" + path +
                              ") for '" + a.name + "'";
    NpyArray array;
    if (!readNpy(path, array, error))
      throw Failure{error};
    bool fits = role == ArgRole::Batch
                    ? batchLayout(array.shape, a.shape) != BatchLayout::Mismatch
                    : array.shape == a.shape;
    if (!fits)
      throw Failure{what + " has shape " + shapeText(array.shape) +
                    ", expected " + describe(a) +
                    (role == ArgRole::Batch
                         ? " (or a leading steps dimension, or its "
                           "micro-batches merged)"
                         : "")};
    HostTensor t;
    if (!tensorFromArray(array, a.dtype, t, error))
      throw Failure{what + " " + error};
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

std::vector<HostTensor> ober::rt::invoke(Entry entry, const Program &program,
                                         const std::vector<HostTensor> &args) {
  std::vector<std::vector<int64_t>> descriptors;
  for (const HostTensor &t : args)
    descriptors.push_back(t.descriptor());
  size_t words = 0;
  for (const ProgramResult &r : program.results)
    if (r.inPlace < 0)
      words += 3 + 2 * r.shape.size();
  std::vector<int64_t> results(std::max<size_t>(words, 1), 0);
  std::vector<void *> packed = {results.data()};
  for (std::vector<int64_t> &d : descriptors)
    packed.push_back(d.data());
  entry(packed.data());

  std::vector<HostTensor> out;
  size_t at = 0;
  for (const ProgramResult &r : program.results) {
    if (r.inPlace >= 0) { // in that argument's buffer now
      out.push_back(args[r.inPlace]);
      continue;
    }
    auto *block = reinterpret_cast<void *>(results[at]);
    char *data = reinterpret_cast<char *>(results[at + 1]) +
                 results[at + 2] * dtypeSize(r.dtype);
    const HostTensor *owner = nullptr;
    for (const HostTensor &t : args)
      if (t.block() == block)
        owner = &t;
    for (const HostTensor &t : out)
      if (t.block() == block)
        owner = &t;
    out.push_back(owner ? HostTensor::share(*owner, r.dtype, r.shape, data)
                        : HostTensor::adopt(r.dtype, r.shape, block, data));
    at += 3 + 2 * r.shape.size();
  }
  return out;
}

int ober::rt::train(Entry entry, const Program &program,
                    const Options &options, const std::string &self) {
  try {
    std::vector<HostTensor> args(program.args.size());
    for (auto &[i, t] : loadParameters(program, weightsPath(program, options),
                                       options.initSeed))
      args[i] = std::move(t);
    for (size_t i : program.argsWith(ArgRole::State))
      args[i] = HostTensor(program.args[i].dtype, program.args[i].shape);
    for (size_t i : program.argsWith(ArgRole::LearningRate)) {
      args[i] = HostTensor(program.args[i].dtype, program.args[i].shape);
      storeFloat(args[i], 0, options.learningRate);
    }
    std::vector<size_t> batchArgs = program.argsWith(ArgRole::Batch);
    std::vector<HostTensor> files = readInputs(program, options, ArgRole::Batch);
    Clock clock;
    for (int64_t s = 0; s < options.steps; ++s) {
      for (size_t k = 0; k < batchArgs.size(); ++k) {
        const ProgramArg &a = program.args[batchArgs[k]];
        const HostTensor &f = files[k];
        int64_t offset = batchOffset(batchLayout(f.shape(), a.shape), f.shape(),
                                     a.shape, s);
        args[batchArgs[k]] = HostTensor::share(
            f, a.dtype, a.shape, f.data() + offset * dtypeSize(a.dtype));
      }
      clock.begin();
      std::vector<HostTensor> results = invoke(entry, program, args);
      clock.end();
      for (size_t r = 0; r < results.size(); ++r) {
        const ProgramResult &res = program.results[r];
        if (res.role == ResultRole::Loss)
          std::printf("step %lld loss %.9g\n", static_cast<long long>(s),
                      loadFloat(results[r], 0));
        else if (res.arg >= 0)
          args[res.arg] = results[r];
      }
      std::fflush(stdout);
    }
    if (options.timing)
      clock.print();
    if (options.saveParams.empty())
      return 0;
    if (!makeDirectories(options.saveParams))
      throw Failure{"cannot create " + options.saveParams};
    for (size_t i : program.argsWith(ArgRole::Parameter)) {
      std::string error,
          path = options.saveParams + "/" + program.args[i].name + ".npy";
      if (!writeNpy(path, arrayOf(args[i]), error))
        throw Failure{error};
    }
    return 0;
  } catch (const Failure &f) {
    return report(self, f.message);
  }
}

int ober::rt::infer(Entry entry, const Program &program,
                    const Options &options, const std::string &self) {
  try {
    std::vector<HostTensor> args(program.args.size());
    for (auto &[i, t] : loadParameters(program, weightsPath(program, options),
                                       0))
      args[i] = std::move(t);
    std::vector<size_t> inputArgs = program.argsWith(ArgRole::Input);
    std::vector<HostTensor> inputs = readInputs(program, options, ArgRole::Input);
    for (size_t k = 0; k < inputArgs.size(); ++k)
      args[inputArgs[k]] = inputs[k];
    Clock clock;
    clock.begin();
    std::vector<HostTensor> results = invoke(entry, program, args);
    clock.end();
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
    return report(self, f.message);
  }
}
