//===- program.cpp - fuzz target: an executable's program manifest --------===//
//
// Part of Ober-Train. Any text as the manifest an executable carries: a
// manifest that reads writes back to one that reads the same.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Program.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::rt;
  Program program, again;
  std::string error;
  if (!readProgram(std::string(reinterpret_cast<const char *>(data), size),
                   program, error))
    return 0;
  std::string text = writeProgram(program);
  if (!readProgram(text, again, error) || writeProgram(again) != text)
    std::abort();
  (void)program.devices();
  return 0;
}
