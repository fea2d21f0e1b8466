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
  const char *self = "ober-launch";
  long ranks = 0, maxRestarts = 0;
  std::string launcher = std::getenv("SLURM_JOB_ID") ? "srun" : "mpirun";
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--")
      break;
    auto value = [&](long &out, long least) {
      char *end = nullptr;
      if (i + 1 >= argc)
        return false;
      out = std::strtol(argv[++i], &end, 10);
      return *argv[i] && !*end && out >= least;
    };
    if (arg == "--np") {
      if (!value(ranks, 1))
        return usage(self, "--np needs a positive number of ranks");
    } else if (arg == "--max-restarts") {
      if (!value(maxRestarts, 0))
        return usage(self, "--max-restarts needs a non-negative number");
    } else if (arg == "--launcher") {
      if (i + 1 >= argc ||
          (std::string(argv[i + 1]) != "mpirun" &&
           std::string(argv[i + 1]) != "srun"))
        return usage(self, "--launcher must be mpirun or srun");
      launcher = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      usage(self, "");
      return 0;
    } else {
      return usage(self, "unknown option '" + arg + "'");
    }
  }
  if (ranks == 0)
    return usage(self, "--np is required");
  if (i + 1 >= argc)
    return usage(self, "no executable after --");
  std::vector<std::string> program(argv + i + 1, argv + argc);
  bool hasCheckpoints = false, resumes = false;
  for (const std::string &a : program) {
    hasCheckpoints |= a == "--checkpoint-dir" || a.rfind("--checkpoint-dir=", 0) == 0;
    resumes |= a == "--resume";
  }
  if (maxRestarts > 0 && !hasCheckpoints)
    return usage(self, "restarts need the executable's --checkpoint-dir (a "
                       "restart resumes from its newest checkpoint)");
  underSrun = launcher == "srun";
  std::vector<std::string> job;
  if (underSrun)
    job = {"srun", "-n", std::to_string(ranks), "--kill-on-bad-exit=1"};
  else
    job = {"mpirun", "-np", std::to_string(ranks), "--bind-to", "none"};
  job.insert(job.end(), program.begin(), program.end());

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
