/*===- LaunchEnv.h - rank and world size from the launcher --------*- C -*-===*\
|*                                                                            *|
|* Part of Ober-Train's runtime (no MLIR). A training binary started by       *|
|* mpirun, srun or a torchrun-style launcher learns its rank, the world size  *|
|* and its place on the node from the launcher's environment variables.      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OBER_RUNTIME_LAUNCHENV_H
#define OBER_RUNTIME_LAUNCHENV_H

#include <stddef.h>

/* The exit status of a training executable that refused its command line;
   ober-launch does not restart it (a restart would fail the same way). */
#define OBER_RT_EXIT_USAGE 2

#ifdef __cplusplus
extern "C" {
#endif

/// Where the process sits in the job.
typedef struct ober_rt_launch_env {
  int rank;             /* 0 <= rank < world_size */
  int world_size;       /* number of processes in the job */
  int local_rank;       /* 0 <= local_rank < local_size */
  int local_size;       /* processes on this node; local_rank + 1 when the
                           launcher does not say */
  const char *launcher; /* "openmpi", "slurm", "torchrun", "pmi" or "none" */
} ober_rt_launch_env;

/// Looks up an environment variable; returns NULL when it is unset.
typedef const char *(*ober_rt_getenv_fn)(const char *name, void *context);

/// Reads the launch environment through `lookup` (the process environment
/// when `lookup` is NULL). Launchers are tried in the order Open MPI, Slurm,
/// torchrun, PMI; with none of them the process is rank 0 of 1. Returns 0 on
/// success. On a malformed or inconsistent value it returns non-zero and
/// writes a message naming the variable into `error` (`error_size` bytes).
int ober_rt_read_launch_env(ober_rt_launch_env *out, ober_rt_getenv_fn lookup,
                            void *context, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* OBER_RUNTIME_LAUNCHENV_H */
