//===- Strings.h - string normalisation --------------------------*- C++ -*-===//
//
// Part of Ober-Train. Shared by the interpreter's kernel and the importer,
// which needs the result's length to type the op.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_STRINGS_H
#define OBER_REFERENCE_STRINGS_H

#include <string>
#include <vector>

namespace mlir::ober::reference {

/// ONNX StringNormalizer: drops `stopwords` (case-insensitively unless
/// `caseSensitive`), applies `caseChange` (LOWER, UPPER, NONE; ASCII), and
/// returns one empty string when nothing is left.
std::vector<std::string> normalizeStrings(const std::vector<std::string> &words,
                                          const std::string &caseChange,
                                          bool caseSensitive,
                                          const std::vector<std::string> &stopwords);

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_STRINGS_H
