//===- Ranks.h - a partitioned program on the ranks of a job ----*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Under a launcher (mpirun, srun)
// each process is one rank of the plan's grid, communicating through MPI;
// started directly, the executable runs every rank as a thread of its own
// process. Before the first step every rank checks that the job has the
// plan's size and that all run the same executable; a rank that waits
// longer than --comm-timeout for its peers ends the job.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_RANKS_H
#define OBER_LIB_RUNTIME_EXECUTABLE_RANKS_H

#include "Run.h"

namespace ober::rt {

/// Trains the partitioned `program` (entries by stage) on the ranks of
/// this job. Returns the exit code.
int trainOnRanks(Entry const *entries, const Program &program,
                 const Options &options, const std::string &self);

/// For a program of one device: 0 unless mpirun started it as several
/// ranks (each would run the whole program, and write the same files),
/// which rank 0 reports. Returns the exit code.
int checkOneRank(const Program &program, const std::string &self);
/// Set to 1, each rank of such a job runs its own copy (a sweep whose
/// copies write to their own folders).
inline constexpr const char *kIndependentRanksEnv = "OBER_INDEPENDENT_RANKS";

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_RANKS_H
