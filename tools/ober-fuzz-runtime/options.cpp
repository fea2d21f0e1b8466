//===- options.cpp - fuzz target: an executable's command line ------------===//
//
// Part of Ober-Train. Any bytes, cut at NUL into arguments, as the command
// line of a training and of an inference executable.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Executable/Options.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::rt;
  std::vector<std::string> args = {"train"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  args.push_back(current);
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  for (Program::Kind kind : {Program::Train, Program::Inference}) {
    Options options;
    std::string error;
    Program program;
    program.kind = kind;
    if (parseOptions(static_cast<int>(args.size()), argv.data(), kind,
                     options, error) &&
        options.help)
      (void)usage("train", program);
  }
  return 0;
}
