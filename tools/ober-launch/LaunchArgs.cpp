//===- LaunchArgs.cpp - ober-launch's command line -------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "LaunchArgs.h"

#include <cerrno>
#include <cstdlib>

using namespace ober::launch;

bool ober::launch::parseLaunchArgs(int argc, const char *const *argv,
                                   const std::string &defaultLauncher,
                                   LaunchArgs &out, std::string &error) {
  out = LaunchArgs();
  out.launcher = defaultLauncher;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--")
      break;
    auto value = [&](long &into, long least) {
      if (i + 1 >= argc)
        return false;
      const char *text = argv[++i];
      char *end = nullptr;
      errno = 0;
      into = std::strtol(text, &end, 10);
      return *text && !*end && errno == 0 && into >= least;
    };
    if (arg == "--np") {
      if (!value(out.ranks, 1)) {
        error = "--np needs a positive number of ranks";
        return false;
      }
    } else if (arg == "--max-restarts") {
      if (!value(out.maxRestarts, 0)) {
        error = "--max-restarts needs a non-negative number";
        return false;
      }
    } else if (arg == "--launcher") {
      if (i + 1 >= argc || (std::string(argv[i + 1]) != "mpirun" &&
                            std::string(argv[i + 1]) != "srun")) {
        error = "--launcher must be mpirun or srun";
        return false;
      }
      out.launcher = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      out.help = true;
      return true;
    } else {
      error = "unknown option '" + arg + "'";
      return false;
    }
  }
  if (out.ranks == 0) {
    error = "--np is required";
    return false;
  }
  if (i + 1 >= argc) {
    error = "no executable after --";
    return false;
  }
  out.program.assign(argv + i + 1, argv + argc);
  bool hasCheckpoints = false;
  for (const std::string &a : out.program) {
    hasCheckpoints |=
        a == "--checkpoint-dir" || a.rfind("--checkpoint-dir=", 0) == 0;
    out.resumes |= a == "--resume";
  }
  if (out.maxRestarts > 0 && !hasCheckpoints) {
    error = "restarts need the executable's --checkpoint-dir (a restart "
            "resumes from its newest checkpoint)";
    return false;
  }
  return true;
}

std::vector<std::string> ober::launch::jobCommand(const LaunchArgs &args) {
  std::vector<std::string> job;
  if (args.launcher == "srun")
    job = {"srun", "-n", std::to_string(args.ranks), "--kill-on-bad-exit=1"};
  else
    job = {"mpirun", "-np", std::to_string(args.ranks), "--bind-to", "none"};
  job.insert(job.end(), args.program.begin(), args.program.end());
  return job;
}
