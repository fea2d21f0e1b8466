//===- launch.cpp - fuzz target: ober-launch's command line ---------------===//
//
// Part of Ober-Train. Any bytes, cut at NUL into arguments, as ober-launch's
// command line (parsed only; nothing is started).
//
//===----------------------------------------------------------------------===//

#include "../ober-launch/LaunchArgs.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::launch;
  std::vector<std::string> args = {"ober-launch"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  args.push_back(current);
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
