//===- FuzzSupport.h - what the fuzz targets share --------------*- C++ -*-===//
//
// Part of Ober-Train. Most readers take files: a target writes
// the fuzzer's bytes into a scratch folder of its own process and hands
// the reader the path. An input that stands for several files is cut at
// each "\n--\n".
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_FUZZ_FUZZSUPPORT_H
#define OBER_TOOLS_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ober::fuzz {

/// This process's scratch folder (under $TMPDIR, removed at exit).
const std::string &scratchDir();

/// Writes `bytes` to `scratchDir()/name` (replacing it); returns the path.
std::string writeScratch(const std::string &name, const std::string &bytes);

/// `data` cut at each "\n--\n" into exactly `parts` pieces (missing ones
/// empty, the last one keeps any further separators).
std::vector<std::string> splitInput(const uint8_t *data, size_t size,
                                    size_t parts);

/// A command line: `program`, then `data` cut at each NUL (at most 64
/// arguments in all).
std::vector<std::string> splitArguments(const uint8_t *data, size_t size,
                                        const std::string &program);

} // namespace ober::fuzz

#endif // OBER_TOOLS_FUZZ_FUZZSUPPORT_H
