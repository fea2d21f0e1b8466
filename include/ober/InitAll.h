//===- InitAll.h - register everything ober-opt knows ------------*- C++ -*-===//
//
// Part of Ober-Train. The one place that lists the dialects, interfaces and
// passes the ober tools register.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_INITALL_H
#define OBER_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::ober {

/// Adds the ober dialect and the upstream dialects the pipeline uses.
void registerAllDialects(DialectRegistry &registry);

/// Registers all ober passes and the upstream passes the pipeline uses.
void registerAllPasses();

} // namespace mlir::ober

#endif // OBER_INITALL_H
