//===- ShardingInterfaceImpl.h - ober ops in the shard dialect --*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_DIALECT_OBER_IR_SHARDINGINTERFACEIMPL_H
#define OBER_DIALECT_OBER_IR_SHARDINGINTERFACEIMPL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::ober {

/// Attaches `shard::ShardingInterface` models, generated from the sharding
/// rule table (ShardingRules.h), to the ober ops that have a rule.
void registerShardingInterfaceExternalModels(DialectRegistry &registry);

} // namespace mlir::ober

#endif // OBER_DIALECT_OBER_IR_SHARDINGINTERFACEIMPL_H
