//===- checkpoint.cpp - fuzz target: loading a checkpoint -----------------===//
//
// Part of Ober-Train. Any bytes as a checkpoint folder `step_000000001`:
// its `manifest.json` and one shard file `rank_00000.safetensors` (the
// input cut at "\n--\n"), resumed by a one-device program that trains a
// parameter `w` [4, 3] with optimizer state `optim.w.exp_avg`. In the
// manifest, "@SIZE@" and "@HASH@" stand for the shard file's size and
// hash, so that inputs reach the shard reading behind those checks.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "../../lib/Runtime/Executable/Checkpoint.h"

#include "ober/Runtime/Files.h"

#include <cstdlib>

using namespace ober;

namespace {

rt::Program program() {
  rt::Program p;
  p.kind = rt::Program::Train;
  p.model = "fuzz";
  for (auto [role, name] : {std::pair(rt::ArgRole::Parameter, "w"),
                            std::pair(rt::ArgRole::State, "w.exp_avg")}) {
    rt::ProgramArg a;
    a.role = role;
    a.name = name;
    a.shape = {4, 3};
    p.args.push_back(a);
    rt::ProgramResult r;
    r.role = role == rt::ArgRole::Parameter ? rt::ResultRole::Parameter
                                             : rt::ResultRole::State;
    r.arg = static_cast<int64_t>(p.args.size() - 1);
    r.shape = {4, 3};
    r.inPlace = {-1};
    p.results.push_back(r);
  }
  return p;
}

void replaceAll(std::string &text, const std::string &from,
                const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const rt::Program p = program();
  std::vector<std::string> parts = fuzz::splitInput(data, size, 2);
  std::string dir = fuzz::scratchDir() + "/ckpt",
              folder = dir + "/step_000000001";
  rt::removeTree(dir);
  rt::makeDirectories(folder);
  std::string shard = folder + "/rank_00000.safetensors";
  rt::writeTextFile(shard, parts[1]);
  std::string manifest = parts[0];
  replaceAll(manifest, "@SIZE@", std::to_string(parts[1].size()));
  replaceAll(manifest, "@HASH@", rt::hashFile(shard));
  rt::writeTextFile(folder + "/manifest.json", manifest);

  rt::Placement where;
  std::vector<rt::HostTensor> args = {rt::HostTensor(rt::DType::F32, {4, 3}),
                                      rt::HostTensor(rt::DType::F32, {4, 3})};
  std::vector<rt::SideState> side;
  std::map<std::string, std::string> extra;
  std::string error;
  int64_t steps = rt::loadCheckpoint(p, where, dir, args, side, extra, error);
  // Loaded: the tensors keep their blocks' types and shapes.
  if (steps > 0)
    for (const rt::HostTensor &t : args)
      if (t.dtype() != rt::DType::F32 || t.shape() != std::vector<int64_t>{4, 3})
        std::abort();
  return 0;
}
