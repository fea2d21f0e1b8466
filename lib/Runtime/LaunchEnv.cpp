//===- LaunchEnv.cpp - rank and world size from the launcher --------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/LaunchEnv.h"

#include <cerrno>
#include <cstdarg>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace {

struct Launcher {
  const char *name;
  const char *rank;
  const char *size;
  const char *localRank; // may be null: then 0
  const char *localSize; // may be null: then unknown (1 when no local rank)
};

// The variable that identifies a launcher is its `rank`.
constexpr Launcher kLaunchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
     "SLURM_NTASKS_PER_NODE"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
};

const char *processEnv(const char *name, void *) { return std::getenv(name); }

class Reader {
public:
  Reader(ober_rt_getenv_fn lookup, void *context, char *error, size_t size)
      : lookup(lookup ? lookup : processEnv), context(context), error(error),
        errorSize(size) {}

  const char *get(const char *name) const { return lookup(name, context); }

  /// Parses `name` as a decimal int >= `min`; `fallback` when unset.
  bool integer(const char *name, int min, int fallback, int &out) {
    const char *text = name ? get(name) : nullptr;
    if (!text) {
      out = fallback;
      return true;
    }
    errno = 0;
    char *end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || errno == ERANGE || value < min ||
        value > INT_MAX)
      return fail("%s='%s' is not an integer >= %d", name, text, min);
    out = static_cast<int>(value);
    return true;
  }

  __attribute__((format(printf, 2, 3))) bool fail(const char *format, ...) {
    if (error && errorSize) {
      va_list args;
      va_start(args, format);
      std::vsnprintf(error, errorSize, format, args);
      va_end(args);
    }
    return false;
  }

private:
  ober_rt_getenv_fn lookup;
  void *context;
  char *error;
  size_t errorSize;
};

} // namespace

extern "C" int ober_rt_read_launch_env(ober_rt_launch_env *out,
                                       ober_rt_getenv_fn lookup, void *context,
                                       char *error, size_t errorSize) {
  Reader reader(lookup, context, error, errorSize);
  if (!out)
    return reader.fail("no output given"), 1;
  *out = {0, 1, 0, 1, "none"};
  for (const Launcher &l : kLaunchers) {
    if (!reader.get(l.rank))
      continue;
    if (!reader.get(l.size))
      return reader.fail("%s is set but %s is not (launcher %s)", l.rank,
                         l.size, l.name),
             1;
    ober_rt_launch_env env{0, 1, 0, 1, l.name};
    if (!reader.integer(l.rank, 0, 0, env.rank) ||
        !reader.integer(l.size, 1, 1, env.world_size) ||
        !reader.integer(l.localRank, 0, 0, env.local_rank) ||
        !reader.integer(l.localSize, 1, env.local_rank + 1, env.local_size))
      return 1;
    if (env.rank >= env.world_size)
      return reader.fail("%s=%d is not below %s=%d", l.rank, env.rank, l.size,
                         env.world_size),
             1;
    if (env.local_rank >= env.local_size)
      return reader.fail("%s=%d is not below %s=%d", l.localRank,
                         env.local_rank, l.localSize, env.local_size),
             1;
    if (env.local_size > env.world_size)
      return reader.fail("%s=%d exceeds %s=%d", l.localSize, env.local_size,
                         l.size, env.world_size),
             1;
    *out = env;
    return 0;
  }
  return 0;
}
