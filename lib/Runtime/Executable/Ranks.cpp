//===- Ranks.cpp - a partitioned program on the ranks of a job ------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "Ranks.h"

#include "ober/Runtime/Files.h"
#include "ober/Runtime/LaunchEnv.h"
#include "ober/Runtime/MPI.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace ober::rt;

namespace {

/// The rank that runs another executable than rank 0, or -1.
int64_t differentExecutable(const Placement &where) {
  // A hash of this executable file: ranks running different ones differ.
  uint64_t mine = hashFileValue("/proc/self/exe");
  std::vector<uint64_t> all(where.grid.size());
  where.channel->run(where.overWorld(OBER_COLL_ALL_GATHER, DType::I64, {1}),
                     &mine, all.data());
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      return static_cast<int64_t>(r);
  return -1;
}

/// Ends the job when the rank's channel makes no progress for `timeout`
/// seconds (a peer lost or hung).
class Watchdog {
public:
  Watchdog(const Channel &channel, double timeout, void (*end)(int))
      : thread([this, &channel, timeout, end] {
          while (!stop.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            double stalled = channel.stalledSeconds();
            if (stalled < timeout)
              continue;
            std::fprintf(stderr,
                         "error: rank %lld waited %.0f s for %s; a rank was "
                         "lost or hangs: ending the job\n",
                         static_cast<long long>(channel.rank()), stalled,
                         channel.pendingDescription().c_str());
            std::fflush(stderr);
            end(3);
          }
        }) {}
  ~Watchdog() {
    stop = true;
    thread.join();
  }

private:
  std::atomic<bool> stop{false};
  std::thread thread;
};

/// Ends the job when, once armed, what it guards takes longer than
/// `timeout` seconds, where no channel watchdog can see it: NCCL has no
/// timeout, so a device transport's setup (communicators connect with
/// every peer) and its teardown (it waits for the device collectives it
/// queued, which a rank that failed never joins) wait for good on a rank
/// that was lost. `what` completes "rank R: ... within T s".
class Deadline {
public:
  Deadline(int64_t rank, double timeout, void (*end)(int), const char *what)
      : thread([this, rank, timeout, end, what] {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [this] { return armed || closed; });
          if (changed.wait_for(lock, std::chrono::duration<double>(timeout),
                               [this] { return closed; }))
            return;
          std::fprintf(stderr,
                       "error: rank %lld: %s within %.0f s (a rank was lost "
                       "or hangs): ending the job\n",
                       static_cast<long long>(rank), what, timeout);
          std::fflush(nullptr);
          end(3);
        }) {}
  /// Starts the clock.
  void arm() {
    std::lock_guard<std::mutex> lock(mutex);
    armed = true;
    changed.notify_all();
  }
  ~Deadline() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      closed = true;
    }
    changed.notify_all();
    thread.join();
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  bool armed = false, closed = false;
  std::thread thread;
};

[[noreturn]] void endProcess(int code) { std::_Exit(code); }
[[noreturn]] void endMPIJob(int code) { mpiAbort(code); }

void fatalInProcess(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}
void fatalInMPIJob(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  mpiAbort(1);
}

/// Runs rank `rank` of `program` over `transport` on this thread.
int runRank(Transport &transport, int64_t rank, Entry const *entries,
            const Program &program, const Options &options,
            const std::string &self, int threads, void (*end)(int),
            int64_t ranksHere) {
  Placement where = Placement::of(program, rank);
  where.ranksInProcess = ranksHere;
  // The program's group kinds, then the world's, then the replicas'.
  std::vector<std::vector<int64_t>> groups = program.groups;
  groups.push_back(where.allAxes());
  if (program.localSteps > 1)
    groups.push_back({program.replicaAxis});
  try {
    Channel channel(transport, where.grid, rank, groups);
    where.channel = &channel;
    setCurrentChannel(&channel);
    struct Reset {
      ~Reset() { setCurrentChannel(nullptr); }
    } reset;
    if (int64_t other = differentExecutable(where); other >= 0)
      return rank == 0 ? reportError(self,
                                "rank " + std::to_string(other) +
                                    " runs another executable than rank 0; "
                                    "start every rank with the same one",
                                2)
                       : 2;
    if (!prepareRank(program, where, threads, self))
      return 70;
    Watchdog watchdog(channel, options.commTimeout, end);
    // Declared before the device channel and transport, so that it is
    // armed (below) before they close and closed after them.
    Deadline teardown(rank, options.commTimeout, end,
                      "the device collectives queued before the end of "
                      "training did not finish");
    std::unique_ptr<Transport> onDevice;
    std::optional<Channel> deviceChannel;
    std::optional<Watchdog> deviceWatchdog;
    struct Arm {
      Deadline &deadline;
      ~Arm() { deadline.arm(); }
    } arm{teardown};
    // A failure from here on, while the rank connects a device transport
    // or has one, ends the job at once: peers may wait for it in NCCL calls
    // (which have no timeout), and closing its communicators may wait for
    // them.
    bool connecting = true;
    int code;
    try {
      {
        // Generated code's collectives on their own transport where its
        // buffers are the device's, connected under a deadline.
        Deadline setup(rank, options.commTimeout, end,
                       "the device collectives' communicators did not "
                       "connect");
        setup.arm();
        onDevice = programTransport(transport, program, where);
        if (onDevice) {
          deviceChannel.emplace(*onDevice, where.grid, rank, groups);
          where.programChannel = &*deviceChannel;
          setCurrentChannel(&*deviceChannel);
          deviceWatchdog.emplace(*deviceChannel, options.commTimeout, end);
        }
      }
      connecting = false;
      code = train(entries[where.stage], program, options, self, where);
    } catch (const std::exception &e) {
      code = reportError(self, "rank " + std::to_string(rank) + ": " + e.what(),
                         1);
    }
    if (code && (connecting || onDevice)) {
      std::fflush(nullptr);
      end(code);
    }
    return code;
  } catch (const CommError &e) {
    return reportError(self, "rank " + std::to_string(rank) + ": " + e.what(), 1);
  }
}

/// The threads of each rank: --threads, else the node's cores shared.
int threadsPerRank(const Options &options, int64_t ranksOnNode) {
  if (options.threads > 0)
    return options.threads;
  int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::max<int64_t>(1, cores / ranksOnNode));
}

/// Every rank as a thread of this process.
int trainAsThreads(Entry const *entries, const Program &program,
                   const Options &options, const std::string &self) {
  int64_t devices = program.devices();
  std::shared_ptr<ThreadHub> hub = makeThreadHub(devices, options.commTimeout);
  setFatalHandler(fatalInProcess);
  std::vector<int> codes(devices, 0);
  std::vector<std::thread> ranks;
  int threads = threadsPerRank(options, devices);
  for (int64_t r = 0; r < devices; ++r)
    ranks.emplace_back([&, r] {
      std::unique_ptr<Transport> t = threadTransport(hub, r);
      codes[r] =
          runRank(*t, r, entries, program, options, self, threads, endProcess,
                  devices);
      if (codes[r])
        failThreadHub(*hub, "rank " + std::to_string(r) + " failed");
    });
  for (std::thread &t : ranks)
    t.join();
  for (int code : codes)
    if (code)
      return code;
  return 0;
}
} // namespace

namespace {
/// Non-zero where the launcher started another number of ranks than the
/// program has devices (rank 0 says so).
int checkWorldSize(const ober_rt_launch_env &env, int64_t devices,
                   const std::string &self) {
  if (env.world_size == devices)
    return 0;
  if (env.rank != 0)
    return 2;
  std::string n = std::to_string(devices);
  return reportError(
      self,
      "the " + std::string(devices == 1 ? "program runs on 1 device"
                                        : "plan runs on " + n + " devices") +
          " but this job has " + std::to_string(env.world_size) +
          " rank(s) (" + env.launcher + "); start " + n + " (mpirun -np " +
          n + ", srun -n " + n + ")" +
          (devices == 1 ? std::string(", or set ") + kIndependentRanksEnv +
                              "=1 for independent copies"
                        : ", or run it without a launcher for threads"),
      2);
}
} // namespace

int ober::rt::checkOneRank(const Program &program, const std::string &self) {
  // Only MPI's launchers, read cleanly: Slurm's variables are set in a
  // batch script too, which may run a program of one device directly.
  // Independent copies (a sweep, each with its own folders) are asked for.
  ober_rt_launch_env env;
  char error[512];
  const char *copies = std::getenv(kIndependentRanksEnv);
  if ((copies && std::string(copies) == "1") ||
      ober_rt_read_launch_env(&env, nullptr, nullptr, error, sizeof(error)))
    return 0;
  std::string launcher = env.launcher;
  if (launcher != "openmpi" && launcher != "pmi")
    return 0;
  return checkWorldSize(env, program.devices(), self);
}

int ober::rt::trainOnRanks(Entry const *entries, const Program &program,
                           const Options &options, const std::string &self) {
  ober_rt_launch_env env;
  char error[512];
  if (ober_rt_read_launch_env(&env, nullptr, nullptr, error, sizeof(error)))
    return reportError(self, error, 2);
  std::string launcher = env.launcher;
  int64_t devices = program.devices();
  prepareProcess(program);
  if (launcher == "none")
    return trainAsThreads(entries, program, options, self);
  if (int code = checkWorldSize(env, devices, self))
    return code;
  if (launcher == "torchrun")
    return reportError(self,
                  "started by a torchrun-style launcher: executables "
                  "communicate through MPI; start them with mpirun or srun",
                  2);
  std::string why;
  std::unique_ptr<Transport> transport = mpiTransport(why);
  if (!transport)
    return reportError(self, why, 2);
  if (transport->size() != devices || transport->rank() != env.rank) {
    reportError(self,
           "MPI sees rank " + std::to_string(transport->rank()) + " of " +
               std::to_string(transport->size()) + ", the launcher rank " +
               std::to_string(env.rank) + " of " +
               std::to_string(env.world_size),
           2);
    mpiAbort(2);
  }
  setFatalHandler(fatalInMPIJob);
  int code = runRank(*transport, transport->rank(), entries, program, options,
                     self, threadsPerRank(options, env.local_size), endMPIJob,
                     1);
  if (code)
    mpiAbort(code); // the other ranks may wait for this one
  transport.reset();
  mpiFinalize();
  return 0;
}
