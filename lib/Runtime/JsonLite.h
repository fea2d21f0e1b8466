//===- JsonLite.h - a small JSON reader for runtime files -------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR, no LLVM). Enough JSON for the
// weights header and launch descriptions: objects, arrays, strings, numbers,
// booleans and null, with depth and size limits for untrusted input.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_JSONLITE_H
#define OBER_LIB_RUNTIME_JSONLITE_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ober::rt::json {

struct Value {
  enum Kind { Null, Bool, Integer, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  bool isObject() const { return kind == Object; }
  bool isArray() const { return kind == Array; }
  bool isString() const { return kind == String; }
  bool isInteger() const { return kind == Integer; }
  /// Compact JSON text of the value (for error messages).
  std::string dump() const;
};

/// Parses `text`; on failure returns false and sets `error` with the offset.
bool parse(const std::string &text, Value &out, std::string &error);

/// `s` as a JSON string literal.
std::string quote(const std::string &s);
/// `v` as a JSON array of integers (`[1,2]`).
std::string list(const std::vector<int64_t> &v);

} // namespace ober::rt::json

#endif // OBER_LIB_RUNTIME_JSONLITE_H
