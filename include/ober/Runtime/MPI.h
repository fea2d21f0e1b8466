//===- MPI.h - the MPI transport between processes --------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). One process per rank, started by
// mpirun or srun. Only the channel's thread calls MPI after start-up
// (MPI_THREAD_SERIALIZED).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_MPI_H
#define OBER_RUNTIME_MPI_H

#include "ober/Runtime/Comm.h"

namespace ober::rt {

/// Initializes MPI and returns the world's transport, or null with `error`.
std::unique_ptr<Transport> mpiTransport(std::string &error);
/// Finishes MPI (after the transport is gone).
void mpiFinalize();
/// Ends every process of the job with `code`.
[[noreturn]] void mpiAbort(int code);

} // namespace ober::rt

#endif // OBER_RUNTIME_MPI_H
