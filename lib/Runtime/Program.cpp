//===- Program.cpp - the compiled program's manifest ----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Program.h"

#include "JsonLite.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

using namespace ober::rt;

namespace {

constexpr int kManifestVersion = 3;
/// The most devices a program's grid may have.
constexpr uint64_t kMaxDevices = uint64_t(1) << 24;

/// The manifest's name of each value of an enum.
template <typename E> struct Named {
  E value;
  const char *name;
};
constexpr Named<ArgRole> kArgRoles[] = {{ArgRole::Parameter, "param"},
                                        {ArgRole::State, "state"},
                                        {ArgRole::Batch, "batch"},
                                        {ArgRole::LearningRate, "lr"},
                                        {ArgRole::Input, "input"}};
constexpr Named<ResultRole> kResultRoles[] = {{ResultRole::Parameter, "param"},
                                              {ResultRole::State, "state"},
                                              {ResultRole::Loss, "loss"},
                                              {ResultRole::GradNorm,
                                               "grad_norm"},
                                              {ResultRole::Output, "output"}};
constexpr Named<InitKind> kInits[] = {{InitKind::Normal, "normal"},
                                      {InitKind::Ones, "ones"},
                                      {InitKind::Zeros, "zeros"}};

template <typename E, size_t N>
const char *nameOf(const Named<E> (&table)[N], E value) {
  for (const Named<E> &entry : table)
    if (entry.value == value)
      return entry.name;
  return "?";
}

template <typename E, size_t N>
bool lookup(const Named<E> (&table)[N], const std::string &name, E &out) {
  for (const Named<E> &entry : table)
    if (name == entry.name) {
      out = entry.value;
      return true;
    }
  return false;
}

std::string splitJson(const Split &split) {
  return ", \"split\": " + json::list(split.axes) +
         ", \"split_groups\": " + json::list(split.groups);
}

/// Reads `value` (an object) field by field, recording the first problem.
struct Reader {
  std::string where, error;

  const json::Value *field(const json::Value &v, const char *name,
                           json::Value::Kind kind) {
    auto it = v.object.find(name);
    if (it == v.object.end() || it->second.kind != kind) {
      fail(std::string("missing or malformed '") + name + "'");
      return nullptr;
    }
    return &it->second;
  }
  void fail(const std::string &message) {
    if (error.empty())
      error = where + message;
  }
  bool tensor(const json::Value &v, DType &dtype, std::vector<int64_t> &shape) {
    const json::Value *d = field(v, "dtype", json::Value::String);
    const json::Value *s = field(v, "shape", json::Value::Array);
    if (!d || !s)
      return false;
    std::optional<DType> t = dtypeFromSafeTensorsName(d->string);
    if (!t) {
      fail("unknown dtype '" + d->string + "'");
      return false;
    }
    dtype = *t;
    if (!integers(*s, 0, shape)) {
      fail("shape " + s->dump() + " is not a list of sizes");
      return false;
    }
    if (!checkedBytes(shape, dtypeSize(dtype))) {
      fail("shape " + s->dump() + " holds more than 2^62 bytes");
      return false;
    }
    return true;
  }
  /// The optional `split` and `split_groups` of a tensor of `rank`
  /// dimensions on a grid of `gridRank` axes.
  bool split(const json::Value &v, size_t rank, size_t gridRank, Split &out) {
    auto axes = v.object.find("split"), groups = v.object.find("split_groups");
    if (axes == v.object.end() && groups == v.object.end())
      return true;
    if (axes == v.object.end() || groups == v.object.end() ||
        !integers(axes->second, -1, out.axes) ||
        !integers(groups->second, 1, out.groups) || out.axes.size() != rank ||
        out.groups.size() != rank) {
      fail("split and split_groups need an entry per dimension");
      return false;
    }
    for (int64_t a : out.axes)
      if (a >= static_cast<int64_t>(gridRank)) {
        fail("split names grid axis " + std::to_string(a) + " of " +
             std::to_string(gridRank));
        return false;
      }
    return true;
  }
  /// The integers of `array`, each at least `least`.
  static bool integers(const json::Value &array, int64_t least,
                       std::vector<int64_t> &out) {
    out.clear();
    for (const json::Value &n : array.array) {
      if (!n.isInteger() || n.integer < least)
        return false;
      out.push_back(n.integer);
    }
    return true;
  }
};

} // namespace

std::string IndexRange::check(DType dtype, const char *data,
                              const std::vector<int64_t> &shape) const {
  for (int64_t i = 0, count = elementCount(shape); i < count; ++i) {
    int64_t v;
    if (dtype == DType::I64) {
      std::memcpy(&v, data + 8 * i, 8);
    } else {
      int32_t w;
      std::memcpy(&w, data + 4 * i, 4);
      v = w;
    }
    if (allows(v))
      continue;
    std::vector<int64_t> at(shape.size());
    for (size_t d = shape.size(), rest = i; d-- > 0;) {
      at[d] = static_cast<int64_t>(rest) % shape[d];
      rest /= shape[d];
    }
    return "value " + std::to_string(v) + " at " + shapeText(at) +
           " is outside [" +
           std::to_string(low) + ", " + std::to_string(high) + ")" +
           (hasIgnored ? " (or " + std::to_string(ignored) + ", ignored)"
                       : "") +
           ": " + use;
  }
  return "";
}

std::vector<size_t> Program::argsWith(ArgRole role) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].role == role)
      out.push_back(i);
  return out;
}

bool Program::returns(ResultRole role) const {
  for (const ProgramResult &res : results)
    if (res.role == role)
      return true;
  return false;
}

bool ProgramArg::isReadBy(int64_t stage) const {
  if (readBy.empty())
    return true;
  for (int64_t s : readBy)
    if (s == stage)
      return true;
  return false;
}

bool Program::touches(int64_t stage, size_t i) const {
  if (args[i].isReadBy(stage))
    return true;
  for (const ProgramResult &r : results)
    if (r.arg == static_cast<int64_t>(i) &&
        ((r.stage < 0 || r.stage == stage) ||
         r.inPlaceIn(stage) != static_cast<int64_t>(i)))
      return true;
  return false;
}

int64_t Program::devices() const { return elementCount(grid); }

int64_t ober::rt::elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string ober::rt::shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string ober::rt::writeProgram(const Program &p) {
  std::ostringstream os;
  os << "{\"format\": \"ober-program\", \"version\": " << kManifestVersion
     << ", \"kind\": \"" << (p.kind == Program::Train ? "train" : "inference")
     << "\", \"model\": " << json::quote(p.model)
     << ", \"weights\": " << json::quote(p.weights)
     << ", \"grid\": " << json::list(p.grid)
     << ", \"pipeline_axis\": " << p.pipelineAxis
     << ", \"stages\": " << p.stages << ", \"groups\": [";
  for (size_t i = 0; i < p.groups.size(); ++i)
    os << (i ? ", " : "") << json::list(p.groups[i]);
  os << "]";
  if (!p.transfers.empty()) {
    os << ", \"transfers\": [";
    for (size_t i = 0; i < p.transfers.size(); ++i)
      os << (i ? ", " : "")
         << json::list(std::vector<int64_t>{p.transfers[i].first,
                                            p.transfers[i].second});
    os << "]";
  }
  os << ", \"samples_per_step\": " << p.samplesPerStep
     << ", \"tokens_per_sample\": " << p.tokensPerSample;
  if (p.modelFlops > 0) {
    char facts[320];
    std::snprintf(facts, sizeof(facts),
                  ", \"model_flops\": %.17g, \"peak_flops\": %.17g, "
                  "\"predicted_step_time\": %.17g, \"predicted_mfu\": %.17g, "
                  "\"predicted_peak_memory\": %.17g",
                  p.modelFlops, p.peakFlops, p.predictedStepTime,
                  p.predictedMfu, p.predictedPeakMemory);
    os << facts;
  }
  if (p.localSteps > 1)
    os << ", \"local_steps\": " << p.localSteps
       << ", \"replica_axis\": " << p.replicaAxis;
  os << ",\n \"args\": [";
  for (size_t i = 0; i < p.args.size(); ++i) {
    const ProgramArg &a = p.args[i];
    os << (i ? ",\n  " : "\n  ") << "{\"role\": \""
       << nameOf(kArgRoles, a.role) << "\", \"name\": " << json::quote(a.name)
       << ", \"dtype\": \"" << dtypeSafeTensorsName(a.dtype)
       << "\", \"shape\": " << json::list(a.shape);
    if (a.role == ArgRole::Parameter)
      os << ", \"init\": \"" << nameOf(kInits, a.init) << "\", \"key\": \""
         << a.initKey << "\"";
    if (!a.split.isWhole())
      os << splitJson(a.split);
    if (!a.readBy.empty())
      os << ", \"read_by\": " << json::list(a.readBy);
    if (a.indices.checked()) {
      os << ", \"indices\": {\"low\": " << a.indices.low
         << ", \"high\": " << a.indices.high;
      if (a.indices.hasIgnored)
        os << ", \"ignored\": " << a.indices.ignored;
      os << ", \"use\": " << json::quote(a.indices.use) << "}";
    }
    os << "}";
  }
  os << "],\n \"results\": [";
  for (size_t i = 0; i < p.results.size(); ++i) {
    const ProgramResult &r = p.results[i];
    os << (i ? ",\n  " : "\n  ") << "{\"role\": \""
       << nameOf(kResultRoles, r.role) << "\", \"arg\": " << r.arg
       << ", \"dtype\": \"" << dtypeSafeTensorsName(r.dtype)
       << "\", \"shape\": " << json::list(r.shape);
    os << ", \"in_place\": " << json::list(r.inPlace);
    if (!r.split.isWhole())
      os << splitJson(r.split);
    if (r.stage >= 0)
      os << ", \"stage\": " << r.stage;
    os << "}";
  }
  os << "],\n \"kernels\": [";
  for (size_t i = 0; i < p.kernels.size(); ++i)
    os << (i ? ",\n  " : "\n  ")
       << "{\"name\": " << json::quote(p.kernels[i].name)
       << ", \"desc\": " << json::list(p.kernels[i].desc) << "}";
  os << "]}\n";
  return os.str();
}

bool ober::rt::readProgram(const std::string &text, Program &out,
                           std::string &error) {
  json::Value root;
  if (!json::parse(text, root, error)) {
    error = "program manifest: " + error;
    return false;
  }
  Reader r;
  r.where = "program manifest: ";
  if (!root.isObject()) {
    error = r.where + "not an object";
    return false;
  }
  const json::Value *version = r.field(root, "version", json::Value::Integer);
  const json::Value *kind = r.field(root, "kind", json::Value::String);
  const json::Value *model = r.field(root, "model", json::Value::String);
  const json::Value *weights = r.field(root, "weights", json::Value::String);
  const json::Value *args = r.field(root, "args", json::Value::Array);
  const json::Value *results = r.field(root, "results", json::Value::Array);
  const json::Value *kernels = r.field(root, "kernels", json::Value::Array);
  const json::Value *grid = r.field(root, "grid", json::Value::Array);
  const json::Value *pipelineAxis =
      r.field(root, "pipeline_axis", json::Value::Integer);
  const json::Value *stages = r.field(root, "stages", json::Value::Integer);
  const json::Value *groups = r.field(root, "groups", json::Value::Array);
  if (version && version->integer != kManifestVersion)
    r.fail("version " + std::to_string(version->integer) +
           " (this runtime reads " + std::to_string(kManifestVersion) + ")");
  if (kind && kind->string != "train" && kind->string != "inference")
    r.fail("unknown kind '" + kind->string + "'");
  if (!r.error.empty()) {
    error = r.error;
    return false;
  }
  out = Program();
  out.kind = kind->string == "train" ? Program::Train : Program::Inference;
  out.model = model->string;
  out.weights = weights->string;
  if (!Reader::integers(*grid, 1, out.grid))
    r.fail("grid " + grid->dump() + " is not a list of sizes");
  else if (std::optional<uint64_t> n = checkedBytes(out.grid, 1);
           !n || *n > kMaxDevices)
    r.fail("grid " + grid->dump() + " has more than " +
           std::to_string(kMaxDevices) + " devices");
  size_t gridRank = out.grid.size();
  out.pipelineAxis = pipelineAxis->integer;
  out.stages = stages->integer;
  if (out.pipelineAxis < -1 ||
      out.pipelineAxis >= static_cast<int64_t>(gridRank) ||
      (out.pipelineAxis < 0 ? out.stages != 1
                            : out.stages != out.grid[out.pipelineAxis]))
    r.fail("pipeline_axis " + std::to_string(out.pipelineAxis) + " and " +
           std::to_string(out.stages) + " stage(s) do not fit grid " +
           grid->dump());
  for (auto [key, slot] : {std::pair("samples_per_step", &out.samplesPerStep),
                           std::pair("tokens_per_sample", &out.tokensPerSample)})
    if (auto it = root.object.find(key); it != root.object.end()) {
      if (!it->second.isInteger() || it->second.integer < 0)
        r.fail(std::string(key) + " must be a non-negative integer");
      else
        *slot = it->second.integer;
    }
  for (auto [key, slot] :
       {std::pair("model_flops", &out.modelFlops),
        std::pair("peak_flops", &out.peakFlops),
        std::pair("predicted_step_time", &out.predictedStepTime),
        std::pair("predicted_mfu", &out.predictedMfu),
        std::pair("predicted_peak_memory", &out.predictedPeakMemory)})
    if (auto it = root.object.find(key); it != root.object.end()) {
      const json::Value &v = it->second;
      double d = v.kind == json::Value::Integer ? static_cast<double>(v.integer)
                 : v.kind == json::Value::Number ? v.number
                                                 : -1;
      if (!(d >= 0))
        r.fail(std::string(key) + " must be a non-negative number");
      else
        *slot = d;
    }
  auto local = root.object.find("local_steps");
  auto replica = root.object.find("replica_axis");
  if (local != root.object.end() || replica != root.object.end()) {
    if (local == root.object.end() || replica == root.object.end() ||
        !local->second.isInteger() || !replica->second.isInteger() ||
        local->second.integer < 2 || replica->second.integer < 0 ||
        replica->second.integer >= static_cast<int64_t>(gridRank))
      r.fail("local_steps needs at least 2 steps and a replica_axis of the "
             "grid");
    else {
      out.localSteps = local->second.integer;
      out.replicaAxis = replica->second.integer;
    }
  }
  if (auto t = root.object.find("transfers"); t != root.object.end()) {
    std::vector<int64_t> pair;
    if (!t->second.isArray())
      r.fail("transfers must be a list of stage pairs");
    for (const json::Value &p : t->second.array)
      if (!Reader::integers(p, 0, pair) || pair.size() != 2 ||
          pair[0] == pair[1] || pair[0] >= out.stages ||
          pair[1] >= out.stages) {
        r.fail("transfer " + p.dump() + " is not a pair of distinct stages "
               "below " + std::to_string(out.stages));
        break;
      } else {
        out.transfers.emplace_back(pair[0], pair[1]);
      }
  }
  for (const json::Value &g : groups->array) {
    std::vector<int64_t> axes;
    if (!Reader::integers(g, 0, axes) || axes.empty()) {
      r.fail("group " + g.dump() + " is not a list of grid axes");
      break;
    }
    for (int64_t a : axes)
      if (a >= static_cast<int64_t>(gridRank))
        r.fail("group " + g.dump() + " names an axis the grid lacks");
    out.groups.push_back(std::move(axes));
  }
  for (const json::Value &a : args->array) {
    if (!r.error.empty())
      break;
    ProgramArg arg;
    r.where = "program manifest: argument #" + std::to_string(out.args.size()) +
              ": ";
    const json::Value *role = r.field(a, "role", json::Value::String);
    const json::Value *name = r.field(a, "name", json::Value::String);
    if (!role || !name || !r.tensor(a, arg.dtype, arg.shape))
      break;
    arg.name = name->string;
    if (!lookup(kArgRoles, role->string, arg.role)) {
      r.fail("unknown role '" + role->string + "'");
      break;
    }
    if (arg.role == ArgRole::Parameter) {
      const json::Value *init = r.field(a, "init", json::Value::String);
      const json::Value *key = r.field(a, "key", json::Value::String);
      if (!init || !key)
        break;
      if (!lookup(kInits, init->string, arg.init)) {
        r.fail("unknown init '" + init->string + "'");
        break;
      }
      arg.initKey = std::strtoull(key->string.c_str(), nullptr, 10);
    }
    if (!r.split(a, arg.shape.size(), gridRank, arg.split))
      break;
    if (auto it = a.object.find("read_by"); it != a.object.end()) {
      bool ok = Reader::integers(it->second, 0, arg.readBy);
      for (int64_t s : arg.readBy)
        ok &= s < out.stages;
      if (!ok) {
        r.fail("read_by " + it->second.dump() + " is not a list of stages");
        break;
      }
    }
    if (auto it = a.object.find("indices"); it != a.object.end()) {
      const json::Value &v = it->second;
      auto low = v.object.find("low"), high = v.object.find("high"),
           ignored = v.object.find("ignored"), use = v.object.find("use");
      bool integer = arg.dtype == DType::I64 || arg.dtype == DType::I32;
      if (!v.isObject() || !integer || low == v.object.end() ||
          high == v.object.end() || !low->second.isInteger() ||
          !high->second.isInteger() ||
          low->second.integer >= high->second.integer ||
          (ignored != v.object.end() && !ignored->second.isInteger())) {
        r.fail("indices " + v.dump() +
               " are not a range {low, high} of an integer input");
        break;
      }
      arg.indices.low = low->second.integer;
      arg.indices.high = high->second.integer;
      arg.indices.hasIgnored = ignored != v.object.end();
      if (arg.indices.hasIgnored)
        arg.indices.ignored = ignored->second.integer;
      if (use != v.object.end())
        arg.indices.use = use->second.string;
    }
    out.args.push_back(std::move(arg));
  }
  for (const json::Value &v : results->array) {
    if (!r.error.empty())
      break;
    ProgramResult res;
    r.where = "program manifest: result #" +
              std::to_string(out.results.size()) + ": ";
    const json::Value *role = r.field(v, "role", json::Value::String);
    const json::Value *arg = r.field(v, "arg", json::Value::Integer);
    if (!role || !arg || !r.tensor(v, res.dtype, res.shape))
      break;
    if (!lookup(kResultRoles, role->string, res.role)) {
      r.fail("unknown role '" + role->string + "'");
      break;
    }
    res.arg = arg->integer;
    const json::Value *inPlace = r.field(v, "in_place", json::Value::Array);
    if (!inPlace || !Reader::integers(*inPlace, -1, res.inPlace) ||
        static_cast<int64_t>(res.inPlace.size()) != out.stages) {
      r.fail("in_place needs an entry per stage");
      break;
    }
    bool fits = true;
    for (int64_t a : res.inPlace)
      fits &= a < 0 || (a < static_cast<int64_t>(out.args.size()) &&
                        out.args[a].shape == res.shape &&
                        out.args[a].dtype == res.dtype);
    if (!fits) {
      r.fail("in_place names no argument of the result's type");
      break;
    }
    if (!r.split(v, res.shape.size(), gridRank, res.split))
      break;
    if (auto it = v.object.find("stage"); it != v.object.end()) {
      if (!it->second.isInteger() || it->second.integer < 0 ||
          it->second.integer >= out.stages) {
        r.fail("stage " + it->second.dump() + " is not a stage");
        break;
      }
      res.stage = it->second.integer;
    }
    bool updates = res.role == ResultRole::Parameter ||
                   res.role == ResultRole::State;
    if (updates && (res.arg < 0 ||
                    res.arg >= static_cast<int64_t>(out.args.size()) ||
                    out.args[res.arg].shape != res.shape ||
                    out.args[res.arg].dtype != res.dtype)) {
      r.fail("updates argument #" + std::to_string(res.arg) +
             ", which does not exist or has another type");
      break;
    }
    out.results.push_back(std::move(res));
  }
  for (const json::Value &k : kernels->array) {
    if (!r.error.empty())
      break;
    ProgramKernel kernel;
    r.where = "program manifest: kernel #" +
              std::to_string(out.kernels.size()) + ": ";
    const json::Value *name = r.field(k, "name", json::Value::String);
    const json::Value *desc = r.field(k, "desc", json::Value::Array);
    if (!name || !desc)
      break;
    if (!Reader::integers(*desc, INT64_MIN, kernel.desc)) {
      r.fail("desc " + desc->dump() + " is not a list of integers");
      break;
    }
    kernel.name = name->string;
    out.kernels.push_back(std::move(kernel));
  }
  if (!r.error.empty()) {
    error = r.error;
    return false;
  }
  return true;
}
