//===- LaunchArgs.h - ober-launch's command line ----------------*- C++ -*-===//
//
// Part of Ober-Train. What `ober-launch [options] -- EXECUTABLE [args]`
// asks for; parsed apart from running it, so that it can be tested and
// fuzzed.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_OBER_LAUNCH_LAUNCHARGS_H
#define OBER_TOOLS_OBER_LAUNCH_LAUNCHARGS_H

#include <string>
#include <vector>

namespace ober::launch {

struct LaunchArgs {
  long ranks = 0, maxRestarts = 0;
  /// "mpirun" or "srun" (default: srun inside a Slurm allocation).
  std::string launcher;
  /// The executable and its arguments.
  std::vector<std::string> program;
  /// Whether the executable's arguments already hold --resume.
  bool resumes = false;
  bool help = false;
};

/// Parses `argv` (`defaultLauncher` unless --launcher says otherwise);
/// false with `error` naming the option at fault.
bool parseLaunchArgs(int argc, const char *const *argv,
                     const std::string &defaultLauncher, LaunchArgs &out,
                     std::string &error);

/// The command that starts `args.program` on its ranks.
std::vector<std::string> jobCommand(const LaunchArgs &args);

} // namespace ober::launch

#endif // OBER_TOOLS_OBER_LAUNCH_LAUNCHARGS_H
