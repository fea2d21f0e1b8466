//===- cluster.cpp - fuzz target: cluster descriptions --------------------===//
//
// Part of Ober-Train. Any bytes as a cluster JSON file (`--ober-plan=
// "cluster=FILE"`), optionally followed by "\n--\n" and the `gpus` and
// `nodes` counts as text. A cluster that reads writes back (JSON and the
// module attribute) to one that reads and verifies; a loaded one verifies.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Planning/Cluster.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"

#include <cstdlib>
#include <sstream>

using namespace mlir::ober::planning;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = new mlir::MLIRContext();
  std::vector<std::string> parts = ober::fuzz::splitInput(data, size, 2);
  std::string error;
  if (llvm::Expected<llvm::json::Value> json = llvm::json::parse(parts[0])) {
    if (std::optional<Cluster> c = clusterFromJSON(*json, error)) {
      std::string again;
      if (!clusterFromJSON(c->toJSON(), again) ||
          !clusterFromAttr(c->toAttr(context), again))
        std::abort();
    }
  } else {
    llvm::consumeError(json.takeError());
  }
  std::string path = ober::fuzz::writeScratch("cluster.json", parts[0]);
  std::istringstream counts(parts[1]);
  long long gpus = 0, nodes = 0;
  std::optional<int64_t> g, n;
  if (counts >> gpus)
    g = gpus;
  if (counts >> nodes)
    n = nodes;
  if (std::optional<Cluster> c = loadCluster(path, g, n, error)) {
    std::string why;
    if (mlir::failed(c->verify(why)))
      std::abort();
  }
  return 0;
}
