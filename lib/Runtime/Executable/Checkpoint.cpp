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
#include <memory>
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

/// The replica whose own state `where` keeps: its coordinate on the
/// replica axis under local SGD, else 0 (the replicas are equal).
int64_t replicaOf(const Program &program, const Placement &where) {
  return program.localSteps > 1 && program.replicaAxis >= 0
             ? where.coords[program.replicaAxis]
             : 0;
}
std::string ofReplica(int64_t replica, const std::string &name) {
  return replica == 0 ? name : "replica" + std::to_string(replica) + "." + name;
}

/// A tensor of a checkpoint that this rank writes or reads: a block of
/// argument `arg`'s shape and cut, `dtype`, under `name` (when reading and
/// the checkpoint has none: under `fallback`, if any; or nothing, when
/// `optional`).
struct Item {
  std::string name, fallback;
  size_t arg = 0;
  DType dtype = DType::F32;
  const HostTensor *value = nullptr; // saving
  HostTensor *into = nullptr;        // loading
  bool optional = false, *found = nullptr;
};

/// What this rank writes: its blocks of parameters and optimizer state
/// that no rank before it on its replica holds, and (replica 0) the side
/// state's.
std::vector<Item> itemsToSave(const Program &program, const Placement &where,
                              const std::vector<HostTensor> &args,
                              const std::vector<SideState> &side) {
  int64_t replica = replicaOf(program, where);
  // The rank at replica 0 that holds the same blocks.
  std::vector<int64_t> coords = where.coords;
  if (replica)
    coords[program.replicaAxis] = 0;
  int64_t like = where.grid.rankAt(coords);
  auto writes = [&](size_t i) {
    int64_t owner = ownerStage(program, i);
    return ownsBlock(program, where, like, program.args[i].split,
                     owner < 0 ? 0 : owner); // on every stage: the first's
  };
  std::vector<Item> items;
  for (size_t i = 0; i < program.args.size(); ++i)
    if (isSaved(program.args[i]) && writes(i)) {
      Item item;
      item.name = ofReplica(replica, tensorName(program.args[i]));
      item.arg = i;
      item.dtype = program.args[i].dtype;
      item.value = &args[i];
      items.push_back(item);
    }
  for (const SideState &state : side)
    if (replica == 0 && writes(state.arg)) {
      Item item;
      item.name = state.name;
      item.arg = state.arg;
      item.dtype = state.value.dtype();
      item.value = &state.value;
      items.push_back(item);
    }
  return items;
}

/// What this rank reads: its stage's parameters and optimizer state (its
/// replica's own, else replica 0's), and the side state, if saved.
std::vector<Item> itemsToLoad(const Program &program, const Placement &where,
                              std::vector<HostTensor> &args,
                              std::vector<SideState> &side) {
  int64_t replica = replicaOf(program, where);
  std::vector<Item> items;
  for (size_t i = 0; i < program.args.size(); ++i)
    if (isSaved(program.args[i]) && program.touches(where.stage, i)) {
      Item item;
      item.fallback = tensorName(program.args[i]);
      item.name = ofReplica(replica, item.fallback);
      item.arg = i;
      item.dtype = program.args[i].dtype;
      item.into = &args[i];
      items.push_back(item);
    }
  for (SideState &state : side) {
    Item item;
    item.name = state.name;
    item.arg = state.arg;
    item.dtype = state.value.dtype();
    item.into = &state.value;
    item.optional = true;
    item.found = &state.found;
    items.push_back(item);
  }
  return items;
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

/// One saved box of a tensor: where it lies, its bytes (a copy).
struct Box {
  Shard shard;
  DType dtype;
  std::vector<char> bytes;
};

/// A copy of what this rank saves: per file (a chunk index) its boxes,
/// and the tensors' global types (JSON members).
struct Snapshot {
  std::map<size_t, std::vector<Box>> boxes;
  std::string tensors;
};

Snapshot takeSnapshot(const Program &program, const Placement &where,
                      const std::vector<Item> &items) {
  Snapshot snap;
  for (const Item &item : items) {
    const ProgramArg &a = program.args[item.arg];
    snap.tensors += std::string(snap.tensors.empty() ? "" : ",") +
                    json::quote(item.name) + ":{\"dtype\":\"" +
                    dtypeSafeTensorsName(item.dtype) + "\",\"shape\":" +
                    json::list(globalShape(a.shape, a.split, where.grid)) +
                    "}";
    std::vector<Chunk> chunks = chunksOf(a.shape, a.split, where);
    for (size_t k = 0; k < chunks.size(); ++k) {
      Box box{{"", item.name, chunks[k].globalStart, chunks[k].shape},
              item.dtype,
              {}};
      extract(*item.value, chunks[k], box.bytes);
      snap.boxes[k].push_back(std::move(box));
    }
  }
  return snap;
}

/// Writes rank `rank`'s files of `snap` into `folder`, each synced, and
/// the sidecar describing them for rank 0 (`rank_<r>.json`); false with
/// `error` naming the file that failed.
bool writeFiles(const Snapshot &snap, int64_t rank, const std::string &folder,
                std::string &error) {
  std::string fileList;
  for (auto &[k, list] : snap.boxes) {
    std::string file = rankFile(rank, k, "safetensors");
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
    std::string path = folder + "/" + file;
    if (!writeWeights(path, weights,
                      {{"format", kFormat},
                       {"DCP_SHARDING_INFO", "{" + info + "}"}},
                      error) ||
        !syncPath(path)) {
      if (error.empty())
        error = path + ": cannot write";
      return false;
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
  std::string sidecar = folder + "/" + rankFile(rank, 0, "json");
  if (!writeTextFile(sidecar,
                     "{\"tensors\":{" + snap.tensors + "},\"files\":[" +
                         fileList + "]}",
                     /*sync=*/true)) {
    error = sidecar + ": cannot write";
    return false;
  }
  return true;
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
  // The writer names the folder after the steps (stepFolder).
  std::string name = folder.substr(folder.rfind('/') + 1);
  if (m.steps != stepsOf(name)) {
    why = "manifest.json's steps (" + std::to_string(m.steps) +
          ") are not its folder's (" + name + ")";
    return false;
  }
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

CheckpointWriter::~CheckpointWriter() {
  if (writer.joinable())
    writer.join();
  if (!folder.empty() && rank == 0)
    removeTree(folder); // never committed
}

bool CheckpointWriter::start(const Program &program, const Placement &where,
                             const std::string &dir, int64_t steps,
                             int64_t keep, const std::vector<HostTensor> &args,
                             const std::vector<SideState> &side,
                             const std::map<std::string, std::string> &extra,
                             bool async, std::string &error) {
  if (!folder.empty() && !finish(where, /*wait=*/true, error))
    return false;
  std::string tmp = dir + "/" + stepFolder(steps) + ".tmp";
  bool made = true;
  if (where.rank == 0) {
    removeTree(tmp);
    made = makeDirectories(tmp);
  }
  if (!allRanks(where, made)) {
    error = "cannot create " + tmp;
    return false;
  }
  this->program = &program;
  this->dir = dir;
  this->steps = steps;
  this->keep = keep;
  this->extra = extra;
  folder = tmp;
  rank = where.rank;
  written = false;
  writeError.clear();
  auto snap = std::make_shared<Snapshot>(
      takeSnapshot(program, where, itemsToSave(program, where, args, side)));
  auto write = [this, snap] {
    std::string why;
    bool ok = writeFiles(*snap, rank, folder, why);
    writeError = ok ? "" : why;
    writeOk = ok;
    written = true;
  };
  if (!async)
    write();
  else
    writer = std::thread(write);
  return async || finish(where, /*wait=*/true, error);
}

bool CheckpointWriter::finish(const Placement &where, bool wait,
                              std::string &error) {
  if (folder.empty())
    return true;
  if (!wait && !allRanks(where, written.load()))
    return true; // still writing somewhere
  if (writer.joinable())
    writer.join();
  std::string final = folder.substr(0, folder.size() - 4); // less ".tmp"
  std::string name = final.substr(dir.size() + 1), tmp = folder;
  folder.clear();
  if (!allRanks(where, writeOk)) {
    if (where.rank == 0)
      removeTree(tmp);
    error = "checkpoint " + final + " not written: " +
            (writeOk ? "another rank failed to write its shards" : writeError);
    return false;
  }
  bool committed = true;
  if (where.rank == 0) {
    committed =
        writeManifest(tmp, steps, *program, extra, error) && syncPath(tmp);
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
                                 std::vector<SideState> &side,
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
  std::vector<Item> wanted = itemsToLoad(program, where, args, side);
  for (const std::string &candidate : candidates) {
    std::string folder = dir + "/" + candidate, why, incompatible;
    Manifest m;
    bool ok = readManifest(folder, m, why);
    // Per wanted item: the name it is read under ("" none) and its shards.
    std::vector<std::string> names(wanted.size());
    std::vector<std::vector<const Shard *>> reads(wanted.size());
    for (size_t k = 0; ok && k < wanted.size(); ++k) {
      const Item &item = wanted[k];
      const ProgramArg &a = program.args[item.arg];
      std::string name = item.name;
      if (!m.tensors.count(name) && !item.fallback.empty())
        name = item.fallback;
      auto it = m.tensors.find(name);
      std::vector<int64_t> shape = globalShape(a.shape, a.split, where.grid);
      if (it == m.tensors.end()) {
        if (item.optional)
          continue;
        incompatible = folder + " has no tensor '" + name + "'";
        break;
      }
      if (it->second.second != shape || it->second.first != item.dtype) {
        incompatible = folder + ": '" + name + "' is " +
                       dtypeName(it->second.first) + " " +
                       shapeText(it->second.second) + ", the model's is " +
                       dtypeName(item.dtype) + " " + shapeText(shape);
        break;
      }
      names[k] = name;
      std::vector<std::vector<int64_t>> inv = inverseIndices(a, where);
      for (const Shard &s : m.shards)
        if (s.name == name && overlaps(s, inv))
          reads[k].push_back(&s);
    }
    // Every file must be whole; the ones this rank reads, unchanged.
    std::map<std::string, bool> read;
    for (const std::vector<const Shard *> &list : reads)
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
    for (size_t k = 0; k < wanted.size(); ++k) {
      if (names[k].empty())
        continue; // optional, and not saved
      const ProgramArg &a = program.args[wanted[k].arg];
      HostTensor t(wanted[k].dtype, a.shape);
      std::vector<std::vector<int64_t>> inv = inverseIndices(a, where);
      int64_t covered = 0;
      for (const Shard *s : reads[k]) {
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
        why = folder + ": the shards of '" + names[k] +
              "' do not cover this rank's block";
      }
      if (!loaded)
        break;
      *wanted[k].into = t;
      if (wanted[k].found)
        *wanted[k].found = true;
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
