//===- options.cpp - fuzz target: an executable's command line ------------===//
//
// Part of Ober-Train. Any bytes, cut at NUL into arguments, as the command
// line of a training and of an inference executable.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "../../lib/Runtime/Executable/Options.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::rt;
  std::vector<std::string> args =
      ober::fuzz::splitArguments(data, size, "train");
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
