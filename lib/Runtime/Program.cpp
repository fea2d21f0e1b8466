//===- Program.cpp - the compiled program's manifest ----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Program.h"

#include "JsonLite.h"

#include <cstdlib>
#include <optional>
#include <sstream>

using namespace ober::rt;

namespace {

constexpr int kManifestVersion = 2;

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

std::string shapeJson(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
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

std::vector<size_t> Program::argsWith(ArgRole role) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].role == role)
      out.push_back(i);
  return out;
}

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
     << ", \"weights\": " << json::quote(p.weights) << ",\n \"args\": [";
  for (size_t i = 0; i < p.args.size(); ++i) {
    const ProgramArg &a = p.args[i];
    os << (i ? ",\n  " : "\n  ") << "{\"role\": \""
       << nameOf(kArgRoles, a.role) << "\", \"name\": " << json::quote(a.name)
       << ", \"dtype\": \"" << dtypeSafeTensorsName(a.dtype)
       << "\", \"shape\": " << shapeJson(a.shape);
    if (a.role == ArgRole::Parameter)
      os << ", \"init\": \"" << nameOf(kInits, a.init) << "\", \"key\": \""
         << a.initKey << "\"";
    os << "}";
  }
  os << "],\n \"results\": [";
  for (size_t i = 0; i < p.results.size(); ++i) {
    const ProgramResult &r = p.results[i];
    os << (i ? ",\n  " : "\n  ") << "{\"role\": \""
       << nameOf(kResultRoles, r.role) << "\", \"arg\": " << r.arg
       << ", \"dtype\": \"" << dtypeSafeTensorsName(r.dtype)
       << "\", \"shape\": " << shapeJson(r.shape);
    if (r.inPlace >= 0)
      os << ", \"in_place\": " << r.inPlace;
    os << "}";
  }
  os << "],\n \"kernels\": [";
  for (size_t i = 0; i < p.kernels.size(); ++i)
    os << (i ? ",\n  " : "\n  ")
       << "{\"name\": " << json::quote(p.kernels[i].name)
       << ", \"desc\": " << shapeJson(p.kernels[i].desc) << "}";
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
  for (const json::Value &a : args->array) {
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
    if (auto it = v.object.find("in_place"); it != v.object.end()) {
      if (!it->second.isInteger() || it->second.integer < 0 ||
          it->second.integer >= static_cast<int64_t>(out.args.size()) ||
          out.args[it->second.integer].shape != res.shape ||
          out.args[it->second.integer].dtype != res.dtype) {
        r.fail("in_place names no argument of the result's type");
        break;
      }
      res.inPlace = it->second.integer;
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
