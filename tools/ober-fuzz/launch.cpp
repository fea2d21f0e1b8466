//===- launch.cpp - fuzz target: ober-launch's command line ---------------===//
//
// Part of Ober-Train. Any bytes, cut at NUL into arguments, as ober-launch's
// command line (parsed only; nothing is started).
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "../ober-launch/LaunchArgs.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::launch;
  std::vector<std::string> args =
      ober::fuzz::splitArguments(data, size, "ober-launch");
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  LaunchArgs parsed;
  std::string error;
  if (!parseLaunchArgs(static_cast<int>(argv.size()), argv.data(), "mpirun",
                       parsed, error) ||
      parsed.help)
    return 0;
  // A parsed request names its ranks and an executable.
  std::vector<std::string> job = jobCommand(parsed);
  if (parsed.ranks < 1 || parsed.program.empty() ||
      job.size() <= parsed.program.size())
    std::abort();
  return 0;
}
