//===- Checkpoint.cpp - training state saved and restored ----------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"

#include "../JsonLite.h"

#include "ober/Runtime/Files.h"
#include "ober/Runtime/Weights.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

using namespace ober::rt;

namespace {

constexpr const char *kFormat = "ober-checkpoint";
constexpr int64_t kVersion = 1;

std::string stepFolder(int64_t steps) {
  char name[32];
  std::snprintf(name, sizeof(name), "step_%09lld",
                static_cast<long long>(steps));
  return name;
}

/// The steps of folder `name` (`step_<digits>`), or -1.
int64_t stepsOf(const std::string &name) {
  if (name.rfind("step_", 0) != 0 || name.size() == 5 || name.size() > 24)
    return -1;
  int64_t steps = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    steps = steps * 10 + (name[i] - '0');
  }
  return steps;
}

std::string rankFile(int64_t rank, size_t chunk, const char *suffix) {
  char name[64];
  if (chunk == 0)
    std::snprintf(name, sizeof(name), "rank_%05lld.%s",
                  static_cast<long long>(rank), suffix);
  else
    std::snprintf(name, sizeof(name), "rank_%05lld.c%zu.%s",
                  static_cast<long long>(rank), chunk, suffix);
  return name;
}

/// What a checkpoint holds: parameters, and optimizer state (and step
/// counters, loss scale) under `optim.`.
bool isSaved(const ProgramArg &a) {
  return a.role == ArgRole::Parameter || a.role == ArgRole::State;
}
std::string tensorName(const ProgramArg &a) {
  return a.role == ArgRole::State ? "optim." + a.name : a.name;
}

std::atomic<bool> stopSignal{false};

void onStopSignal(int) { stopSignal = true; }


/// A box of a rank's block that is a box of the global tensor too (a
/// block split into groups is several).
struct Chunk {
  std::vector<int64_t> localStart, globalStart, shape;
};

std::vector<Chunk> chunksOf(const std::vector<int64_t> &local,
                            const Split &split, const Placement &where) {
  std::vector<Chunk> chunks(1);
  for (size_t d = 0; d < local.size(); ++d) {
    int64_t axis = d < split.axes.size() ? split.axes[d] : -1;
    int64_t groups = axis >= 0 && d < split.groups.size() && split.groups[d] > 0
                         ? split.groups[d]
                         : 1;
    int64_t block = local[d] / groups;
    std::vector<Chunk> next;
    for (const Chunk &c : chunks)
      for (int64_t g = 0; g < groups; ++g) {
        Chunk n = c;
        n.localStart.push_back(g * block);
        n.globalStart.push_back(
            axis < 0 ? 0
                     : g * block * where.grid.shape()[axis] +
                           where.coords[axis] * block);
        n.shape.push_back(axis < 0 ? local[d] : block);
        next.push_back(std::move(n));
      }
    chunks = std::move(next);
  }
  return chunks;
}

/// Copies chunk `c` of `t` (a tensor of the block's shape) into `out`.
void extract(const HostTensor &t, const Chunk &c, std::vector<char> &out) {
  size_t esize = dtypeSize(t.dtype());
  const std::vector<int64_t> &shape = t.shape();
  size_t rank = shape.size();
  int64_t count = elementCount(c.shape);
  out.resize(count * esize);
  if (rank == 0) {
    std::memcpy(out.data(), t.data(), esize);
    return;
  }
  int64_t row = c.shape.back(), rows = row ? count / row : 0;
  std::vector<int64_t> at(rank, 0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset = offset * shape[d] + c.localStart[d] + at[d];
    std::memcpy(out.data() + r * row * esize, t.data() + offset * esize,
                row * esize);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++at[d] < c.shape[d])
        break;
      at[d] = 0;
    }
  }
}

/// One saved box of a tensor.
struct Shard {
  std::string file, name;
  std::vector<int64_t> offsets, shape;
};

struct Manifest {
  int64_t steps = 0;
  std::map<std::string, std::string> extra;
  std::map<std::string, std::pair<DType, std::vector<int64_t>>> tensors;
  struct File {
    std::string name, hash;
    int64_t size = 0;
  };
  std::vector<File> files;
  std::vector<Shard> shards;
};

/// This rank's files: sidecar text describing them for rank 0.
struct Written {
  std::string sidecar;
  bool ok = true;
  std::string error;
};

Written writeShards(const Program &program, const Placement &where,
                    const std::string &folder,
                    const std::vector<HostTensor> &args) {
  Written w;
  // Per file (a chunk index): the boxes it holds.
  struct Box {
    Shard shard;
    DType dtype;
    std::vector<char> bytes;
  };
  std::map<size_t, std::vector<Box>> boxes;
  std::string tensors;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const ProgramArg &a = program.args[i];
    if (!isSaved(a))
      continue;
    int64_t owner = ownerStage(program, i);
    if (owner < 0)
      owner = 0; // the same on every stage: the first one's
    if (!ownsBlock(program, where, where.rank, a.split, owner))
      continue;
    std::string name = tensorName(a);
    tensors += std::string(tensors.empty() ? "" : ",") + json::quote(name) +
               ":{\"dtype\":\"" + dtypeSafeTensorsName(a.dtype) +
               "\",\"shape\":" +
               json::list(globalShape(a.shape, a.split, where.grid)) + "}";
    std::vector<Chunk> chunks = chunksOf(a.shape, a.split, where);
    for (size_t k = 0; k < chunks.size(); ++k) {
      Box box{{"", name, chunks[k].globalStart, chunks[k].shape}, a.dtype, {}};
      extract(args[i], chunks[k], box.bytes);
      boxes[k].push_back(std::move(box));
    }
  }
  std::string fileList;
  for (auto &[k, list] : boxes) {
    std::string file = rankFile(where.rank, k, "safetensors");
    std::vector<WeightData> weights;
    std::string info;
    for (const Box &box : list) {
      WeightData d;
      d.name = box.shard.name;
      d.dtype = box.dtype;
      d.shape = box.shard.shape;
      d.data = box.bytes.data();
      d.size = box.bytes.size();
      weights.push_back(d);
      info += std::string(info.empty() ? "" : ",") + json::quote(d.name) +
              ":{\"saved_offsets\":" + json::list(box.shard.offsets) + "}";
    }
    std::sort(weights.begin(), weights.end(),
              [](const WeightData &a, const WeightData &b) {
                return a.name < b.name;
              });
    std::string path = folder + "/" + file, error;
    if (!writeWeights(path, weights,
                      {{"format", kFormat},
                       {"DCP_SHARDING_INFO", "{" + info + "}"}},
                      error) ||
        !syncPath(path)) {
      w.ok = false;
      w.error = error.empty() ? path + ": cannot write" : error;
      return w;
    }
    std::string shardList;
    for (const Box &box : list)
      shardList += std::string(shardList.empty() ? "" : ",") +
                   "{\"name\":" + json::quote(box.shard.name) +
                   ",\"offsets\":" + json::list(box.shard.offsets) +
                   ",\"shape\":" + json::list(box.shard.shape) + "}";
    fileList += std::string(fileList.empty() ? "" : ",") +
                "{\"file\":" + json::quote(file) +
                ",\"size\":" + std::to_string(fileSize(path)) +
                ",\"hash\":\"" + hashFile(path) + "\",\"shards\":[" +
                shardList + "]}";
  }
  w.sidecar = "{\"tensors\":{" + tensors + "},\"files\":[" + fileList + "]}";
  return w;
}

/// The manifest from the ranks' sidecars in `folder` (removed after).
bool writeManifest(const std::string &folder, int64_t steps,
                   const Program &program,
                   const std::map<std::string, std::string> &extra,
                   std::string &error) {
  std::string tensors, files;
  std::map<std::string, bool> seen;
  for (const std::string &name : listDirectory(folder)) {
    if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json"))
      continue;
    std::string text;
    json::Value v;
    if (!readTextFile(folder + "/" + name, text) ||
        !json::parse(text, v, error)) {
      error = folder + "/" + name + ": " + error;
      return false;
    }
    for (const auto &[t, info] : v.object["tensors"].object)
      if (!seen[t]) {
        seen[t] = true;
        tensors += std::string(tensors.empty() ? "" : ",") + json::quote(t) +
                   ":" + info.dump();
      }
    for (const json::Value &f : v.object["files"].array)
      files += std::string(files.empty() ? "" : ",\n  ") + f.dump();
    std::remove((folder + "/" + name).c_str());
  }
  std::string text = "{\"format\": \"" + std::string(kFormat) +
                     "\", \"version\": " + std::to_string(kVersion) +
                     ", \"steps\": " + std::to_string(steps) +
                     ", \"model\": " + json::quote(program.model) +
                     ", \"grid\": " + json::list(program.grid) +
                     [&] {
                       std::string e = ", \"extra\": {";
                       bool first = true;
                       for (const auto &[k, v] : extra) {
                         e += (first ? "" : ", ") + json::quote(k) + ": " +
                              json::quote(v);
                         first = false;
                       }
                       return e + "}";
                     }() +
                     ",\n \"tensors\": {" + tensors + "},\n \"files\": [\n  " +
                     files + "]}\n";
  std::string path = folder + "/manifest.json";
  if (!writeTextFile(path, text, /*sync=*/true)) {
    error = path + ": cannot write";
    return false;
  }
  return true;
}

/// Parses `folder`'s manifest; false with `why` when it is missing or
/// malformed.
bool readManifest(const std::string &folder, Manifest &m, std::string &why) {
  std::string text, error;
  json::Value v;
  if (!readTextFile(folder + "/manifest.json", text)) {
    why = "no manifest.json";
    return false;
  }
  if (!json::parse(text, v, error) || !v.isObject() ||
      v.object["format"].string != kFormat ||
      v.object["version"].integer != kVersion ||
      !v.object["steps"].isInteger() || !v.object["tensors"].isObject() ||
      !v.object["files"].isArray()) {
    why = "manifest.json is not an ober checkpoint manifest (version " +
          std::to_string(kVersion) + ")" + (error.empty() ? "" : ": " + error);
    return false;
  }
  m.steps = v.object["steps"].integer;
  for (const auto &[k, e] : v.object["extra"].object)
    if (e.isString())
      m.extra[k] = e.string;
  auto sizes = [](const json::Value &a, std::vector<int64_t> &out) {
    out.clear();
    for (const json::Value &n : a.array) {
      if (!n.isInteger() || n.integer < 0)
        return false;
      out.push_back(n.integer);
    }
    return a.isArray();
  };
  for (auto &[name, t] : v.object["tensors"].object) {
    std::optional<DType> dtype =
        dtypeFromSafeTensorsName(t.object["dtype"].string);
    std::vector<int64_t> shape;
    if (!dtype || !sizes(t.object["shape"], shape)) {
      why = "manifest.json: tensor '" + name + "' has no dtype or shape";
      return false;
    }
    m.tensors[name] = {*dtype, shape};
  }
  for (json::Value &f : v.object["files"].array) {
    Manifest::File file;
    file.name = f.object["file"].string;
    file.hash = f.object["hash"].string;
    file.size = f.object["size"].integer;
    if (file.name.empty() || file.name.find('/') != std::string::npos) {
      why = "manifest.json: a file entry has no plain name";
      return false;
    }
    for (json::Value &s : f.object["shards"].array) {
      Shard shard;
      shard.file = file.name;
      shard.name = s.object["name"].string;
      if (!sizes(s.object["offsets"], shard.offsets) ||
          !sizes(s.object["shape"], shard.shape) ||
          !m.tensors.count(shard.name) ||
          shard.offsets.size() != m.tensors[shard.name].second.size() ||
          shard.shape.size() != shard.offsets.size()) {
        why = "manifest.json: a shard of '" + shard.name + "' in " +
              file.name + " is malformed";
        return false;
      }
      for (size_t d = 0; d < shard.shape.size(); ++d)
        if (shard.offsets[d] + shard.shape[d] >
            m.tensors[shard.name].second[d]) {
          why = "manifest.json: a shard of '" + shard.name + "' in " +
                file.name + " lies outside the tensor";
          return false;
        }
      m.shards.push_back(std::move(shard));
    }
    m.files.push_back(std::move(file));
  }
  return true;
}

/// Per dimension, the block index of each global index (-1: not this
/// rank's).
std::vector<std::vector<int64_t>> inverseIndices(const ProgramArg &a,
                                                 const Placement &where) {
  std::vector<int64_t> global = globalShape(a.shape, a.split, where.grid);
  std::vector<std::vector<int64_t>> index =
      blockIndices(a.shape, a.split, where.grid, where.coords);
  std::vector<std::vector<int64_t>> inverse(global.size());
  for (size_t d = 0; d < global.size(); ++d) {
    inverse[d].assign(global[d], -1);
    for (size_t c = 0; c < index[d].size(); ++c)
      inverse[d][index[d][c]] = static_cast<int64_t>(c);
  }
  return inverse;
}

bool overlaps(const Shard &s, const std::vector<std::vector<int64_t>> &inv) {
  for (size_t d = 0; d < s.shape.size(); ++d) {
    bool any = false;
    for (int64_t c = 0; c < s.shape[d] && !any; ++c)
      any = inv[d][s.offsets[d] + c] >= 0;
    if (!any)
      return false;
  }
  return true;
}

/// Copies the elements of shard `s` (its bytes in `data`) that fall in
/// this rank's block into `t`; counts them in `covered`.
void place(const Shard &s, const std::vector<char> &data,
           const std::vector<std::vector<int64_t>> &inv, HostTensor &t,
           int64_t &covered) {
  size_t esize = dtypeSize(t.dtype()), rank = s.shape.size();
  const std::vector<int64_t> &local = t.shape();
  int64_t count = elementCount(s.shape);
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    bool mine = true;
    for (size_t d = 0; d < rank && mine; ++d) {
      int64_t l = inv[d][s.offsets[d] + at[d]];
      mine = l >= 0;
      offset = offset * local[d] + l;
    }
    if (mine) {
      std::memcpy(t.data() + offset * esize, data.data() + i * esize, esize);
      ++covered;
    }
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < s.shape[d])
        break;
      at[d] = 0;
    }
  }
}

} // namespace

bool ober::rt::allRanks(const Placement &where, bool ok) {
  if (!where.channel)
    return ok;
  uint8_t mine = ok ? 1 : 0, all = 0;
  CollectiveDesc d = where.overWorld(OBER_COLL_ALL_REDUCE, DType::Bool, {1});
  d.reduction = OBER_REDUCE_MIN;
  where.channel->run(d, &mine, &all);
  return all != 0;
}

void ober::rt::stopOnSignals() {
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
}

bool ober::rt::stopRequested() { return stopSignal.load(); }

bool ober::rt::saveCheckpoint(const Program &program, const Placement &where,
                              const std::string &dir, int64_t steps,
                              int64_t keep,
                              const std::vector<HostTensor> &args,
                              const std::map<std::string, std::string> &extra,
                              std::string &error) {
  std::string name = stepFolder(steps), final = dir + "/" + name,
              tmp = final + ".tmp";
  bool made = true;
  if (where.rank == 0) {
    removeTree(tmp);
    made = makeDirectories(tmp);
  }
  if (!allRanks(where, made)) {
    error = "cannot create " + tmp;
    return false;
  }
  Written mine = writeShards(program, where, tmp, args);
  if (mine.ok) {
    std::string side = tmp + "/" + rankFile(where.rank, 0, "json");
    mine.ok = writeTextFile(side, mine.sidecar, /*sync=*/true);
    if (!mine.ok)
      mine.error = side + ": cannot write";
  }
  if (!allRanks(where, mine.ok)) {
    if (where.rank == 0)
      removeTree(tmp);
    error = "checkpoint " + final + " not written: " +
            (mine.ok ? "another rank failed to write its shards"
                     : mine.error);
    return false;
  }
  bool committed = true;
  if (where.rank == 0) {
    committed =
        writeManifest(tmp, steps, program, extra, error) && syncPath(tmp);
    if (committed) {
      removeTree(final); // an older save of the same step
      committed = std::rename(tmp.c_str(), final.c_str()) == 0 &&
                  syncPath(dir) && replaceFile(dir + "/latest", name + "\n");
      if (!committed)
        error = "cannot commit " + final;
    }
    if (!committed)
      removeTree(tmp);
    // The oldest complete checkpoints beyond `keep` go.
    std::vector<std::string> done;
    for (const std::string &n : listDirectory(dir))
      if (stepsOf(n) >= 0)
        done.push_back(n);
    std::sort(done.begin(), done.end(),
              [](const std::string &a, const std::string &b) {
                return stepsOf(a) < stepsOf(b);
              });
    for (size_t i = 0; committed && keep > 0 &&
                       i + static_cast<size_t>(keep) < done.size();
         ++i)
      removeTree(dir + "/" + done[i]);
  }
  if (!allRanks(where, committed)) {
    if (error.empty())
      error = "rank 0 could not commit " + final;
    return false;
  }
  return true;
}

int64_t ober::rt::loadCheckpoint(const Program &program,
                                 const Placement &where,
                                 const std::string &dir,
                                 std::vector<HostTensor> &args,
                                 std::map<std::string, std::string> &extra,
                                 std::string &error) {
  std::vector<std::string> candidates;
  for (const std::string &n : listDirectory(dir))
    if (stepsOf(n) >= 0)
      candidates.push_back(n);
  std::sort(candidates.begin(), candidates.end(),
            [](const std::string &a, const std::string &b) {
              return stepsOf(a) > stepsOf(b);
            });
  // What this rank restores.
  std::vector<size_t> wanted;
  for (size_t i = 0; i < program.args.size(); ++i)
    if (isSaved(program.args[i]) && program.touches(where.stage, i))
      wanted.push_back(i);
  for (const std::string &candidate : candidates) {
    std::string folder = dir + "/" + candidate, why, incompatible;
    Manifest m;
    bool ok = readManifest(folder, m, why);
    std::map<size_t, std::vector<const Shard *>> reads;
    for (size_t k = 0; ok && k < wanted.size(); ++k) {
      const ProgramArg &a = program.args[wanted[k]];
      std::string name = tensorName(a);
      auto it = m.tensors.find(name);
      std::vector<int64_t> shape = globalShape(a.shape, a.split, where.grid);
      if (it == m.tensors.end()) {
        incompatible = folder + " has no tensor '" + name + "'";
        break;
      }
      if (it->second.second != shape || it->second.first != a.dtype) {
        incompatible = folder + ": '" + name + "' is " +
                       dtypeName(it->second.first) + " " +
                       shapeText(it->second.second) + ", the model's is " +
                       dtypeName(a.dtype) + " " + shapeText(shape);
        break;
      }
      std::vector<std::vector<int64_t>> inv = inverseIndices(a, where);
      for (const Shard &s : m.shards)
        if (s.name == name && overlaps(s, inv))
          reads[wanted[k]].push_back(&s);
    }
    // Every file must be whole; the ones this rank reads, unchanged.
    std::map<std::string, bool> read;
    for (auto &[i, list] : reads)
      for (const Shard *s : list)
        read[s->file] = true;
    for (const Manifest::File &f : m.files) {
      if (!ok || !incompatible.empty())
        break;
      std::string path = folder + "/" + f.name;
      if (fileSize(path) != f.size) {
        ok = false;
        why = f.name + " is missing or has another size than the manifest's";
      } else if (read.count(f.name) && hashFile(path) != f.hash) {
        ok = false;
        why = f.name + " does not match its hash in the manifest";
      }
    }
    if (!allRanks(where, incompatible.empty())) {
      error = incompatible.empty()
                  ? folder + " does not hold this model's state"
                  : incompatible;
      return -1;
    }
    if (!allRanks(where, ok)) {
      if (!ok)
        std::fprintf(stderr,
                     "warning: rank %lld: skipping checkpoint %s: %s\n",
                     static_cast<long long>(where.rank), folder.c_str(),
                     why.c_str());
      continue;
    }
    // Read the overlapping shards into this rank's blocks.
    bool loaded = true;
    for (size_t i : wanted) {
      const ProgramArg &a = program.args[i];
      HostTensor t(a.dtype, a.shape);
      std::vector<std::vector<int64_t>> inv = inverseIndices(a, where);
      int64_t covered = 0;
      for (const Shard *s : reads[i]) {
        WeightsFile file;
        std::vector<char> data;
        const WeightInfo *info = nullptr;
        if (!file.open(folder + "/" + s->file, why) ||
            !(info = file.find(s->name)) || info->shape != s->shape ||
            !file.read(*info, data, why)) {
          loaded = false;
          why = why.empty() ? folder + "/" + s->file + " lacks '" + s->name +
                                  "' " + shapeText(s->shape)
                            : why;
          break;
        }
        place(*s, data, inv, t, covered);
      }
      if (loaded && covered < elementCount(a.shape)) {
        loaded = false;
        why = folder + ": the shards of '" + tensorName(a) +
              "' do not cover this rank's block";
      }
      if (!loaded)
        break;
      args[i] = t;
    }
    if (!allRanks(where, loaded)) {
      error = loaded ? "another rank could not read " + folder : why;
      return -1;
    }
    extra = m.extra;
    return m.steps;
  }
  return 0;
}
