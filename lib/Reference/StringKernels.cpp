//===- StringKernels.cpp - string normalisation ---------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Reference/Strings.h"

#include <algorithm>
#include <cctype>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::reference;
using namespace mlir::ober::reference::detail;

static std::string mapCase(std::string s, int (*fn)(int)) {
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x80)
      c = static_cast<char>(fn(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> mlir::ober::reference::normalizeStrings(
    const std::vector<std::string> &words, const std::string &caseChange,
    bool caseSensitive, const std::vector<std::string> &stopwords) {
  auto key = [&](const std::string &s) {
    return caseSensitive ? s : mapCase(s, ::tolower);
  };
  std::vector<std::string> stops;
  for (const std::string &s : stopwords)
    stops.push_back(key(s));
  std::vector<std::string> out;
  for (const std::string &w : words) {
    if (std::find(stops.begin(), stops.end(), key(w)) != stops.end())
      continue;
    out.push_back(caseChange == "LOWER"   ? mapCase(w, ::tolower)
                  : caseChange == "UPPER" ? mapCase(w, ::toupper)
                                          : w);
  }
  if (out.empty())
    out.push_back("");
  return out;
}

std::optional<LogicalResult>
mlir::ober::reference::detail::evaluateString(Operation *op,
                                              ArrayRef<Tensor> operands,
                                              Results &results) {
  auto n = dyn_cast<StringNormalizeOp>(op);
  if (!n)
    return std::nullopt;
  const Tensor &in = operands[0];
  std::vector<std::string> words, stops;
  for (int64_t i = 0; i < in.getNumElements(); ++i)
    words.push_back(in.getString(i));
  for (Attribute a : n.getStopwords())
    stops.push_back(cast<StringAttr>(a).getValue().str());
  std::vector<std::string> out = normalizeStrings(
      words, n.getCaseChange().str(), n.getCaseSensitive(), stops);
  Tensor result = resultTensor(op);
  if (static_cast<int64_t>(out.size()) != result.getNumElements())
    return op->emitError("the input leaves ")
           << out.size() << " word(s), but the op was built for "
           << result.getNumElements()
           << " (its result size was fixed from other input values)";
  for (size_t i = 0; i < out.size(); ++i)
    result.setString(i, out[i]);
  results.push_back(std::move(result));
  return success();
}
