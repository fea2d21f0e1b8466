//===- ober-launch.cpp - run a training job and restart it after failures -===//
//
// Part of Ober-Train.
//
//   ober-launch --np N [--max-restarts R] [--launcher mpirun|srun]
//               -- ./train --checkpoint-dir DIR ... [training options]
//
// Starts the executable on N ranks (`mpirun -np N`, or `srun -n N` inside a
// Slurm allocation) and waits. When the job fails (a rank died, hung past
// its --comm-timeout, or failed), it starts it again with `--resume`, which
// continues from the newest complete checkpoint, up to R times. SIGTERM or
// SIGINT to ober-launch asks the ranks to finish their step, checkpoint and
// exit (SIGUSR1 through mpirun, which forwards it; SIGTERM under srun), and
// it does not restart then; nor after exit status 2, an executable's
// refusal of its command line, which a restart would only repeat. Exits
// with the job's status.
//
//===----------------------------------------------------------------------===//

#include "LaunchArgs.h"

#include "ober/Runtime/LaunchEnv.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

std::atomic<pid_t> child{0};
std::atomic<bool> stopping{false};
bool underSrun = false;

void onStop(int) {
  stopping = true;
  if (pid_t p = child.load())
    kill(p, underSrun ? SIGTERM : SIGUSR1);
}

int usage(const char *self, const std::string &why) {
  if (!why.empty())
    std::fprintf(stderr, "%s: error: %s\n", self, why.c_str());
  std::fprintf(stderr,
               "usage: %s --np N [--max-restarts R] [--launcher mpirun|srun] "
               "-- EXECUTABLE --checkpoint-dir DIR [options]\n",
               self);
  return 2;
}

/// Runs `argv` and returns its wait status.
int runJob(const std::vector<std::string> &argv) {
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    execvp(args[0], args.data());
    std::fprintf(stderr, "ober-launch: cannot run %s: %s\n", args[0],
                 std::strerror(errno));
    _exit(127);
  }
  child = pid;
  if (stopping)
    kill(pid, underSrun ? SIGTERM : SIGUSR1);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  child = 0;
  return status;
}

std::string describe(int status) {
  if (WIFEXITED(status))
    return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

} // namespace

int main(int argc, char **argv) {
  using namespace ober::launch;
  const char *self = "ober-launch";
  LaunchArgs args;
  std::string error;
  if (!parseLaunchArgs(argc, argv, std::getenv("SLURM_JOB_ID") ? "srun"
                                                              : "mpirun",
                       args, error))
    return usage(self, error);
  if (args.help) {
    usage(self, "");
    return 0;
  }
  underSrun = args.launcher == "srun";
  std::vector<std::string> job = jobCommand(args);
  long maxRestarts = args.maxRestarts;
  bool resumes = args.resumes;

  struct sigaction sa {};
  sa.sa_handler = onStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  for (long attempt = 0;; ++attempt) {
    int status = runJob(job);
    if (status == 0)
      return 0;
    std::fprintf(stderr, "%s: the job ended with %s\n", self,
                 describe(status).c_str());
    if (stopping)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == OBER_RT_EXIT_USAGE) {
      std::fprintf(stderr, "%s: not restarting: the executable refused its "
                           "command line\n", self);
      return OBER_RT_EXIT_USAGE;
    }
    if (attempt >= maxRestarts) {
      std::fprintf(stderr, "%s: giving up after %ld restart(s)\n", self,
                   attempt);
      return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status)
                                                      : 1;
    }
    std::fprintf(stderr,
                 "%s: restarting from the newest checkpoint (restart %ld of "
                 "%ld)\n",
                 self, attempt + 1, maxRestarts);
    if (!resumes) {
      job.push_back("--resume");
      resumes = true;
    }
  }
}
