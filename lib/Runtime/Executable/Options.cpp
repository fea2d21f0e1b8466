//===- Options.cpp - a compiled executable's command line ------------------===//
//
// Part of Ober-Train's runtime (no MLIR). One table of options: each with
// the kinds of program that take it, its value's name and its help.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

using namespace ober::rt;

namespace {

enum Kinds { Train = 1, Inference = 2, Both = 3 };

struct OptionInfo {
  const char *name;
  const char *value; // nullptr: a flag
  int kinds;
  const char *help;
};

constexpr OptionInfo kOptions[] = {
    {"--input", "FILE.npy", Both,
     "an input, once per input in order (training: one batch for every "
     "step, or a leading dimension with one batch per step)"},
    {"--steps", "N", Train, "training steps to run (default 1)"},
    {"--lr", "LR", Train,
     "learning rate (default 0.001; the peak of a schedule)"},
    {"--lr-schedule", "S", Train,
     "constant (default), cosine or linear: after --warmup-steps of linear "
     "warm-up, decay to --min-lr by --decay-steps (as "
     "torch.optim.lr_scheduler)"},
    {"--warmup-steps", "N", Train, "steps of linear warm-up (default 0)"},
    {"--min-lr", "LR", Train, "the decay's floor (default 0)"},
    {"--decay-steps", "N", Train,
     "the step the decay reaches --min-lr (default --steps)"},
    {"--init-seed", "S", Train,
     "seed of the parameters' initialization when there are no weights "
     "(default 0)"},
    {"--weights", "FILE", Both,
     "safetensors weights (default: the file beside this executable, if "
     "it was compiled with weights); 'none' starts from --init-seed's "
     "initialization instead"},
    {"--data", "PATH", Train,
     "read batches from a data set instead of --input: a Megatron token "
     "data set (PREFIX.bin + PREFIX.idx) or a folder of <input>.npy "
     "arrays; shuffled each epoch, each rank reading its share"},
    {"--data-seed", "S", Train, "seed of the data set's order (default 0)"},
    {"--data-log", "DIR", Train,
     "each rank writes the samples it reads per step to DIR/rank_<r>.txt"},
    {"--log-dir", "DIR", Train,
     "write each step's metrics to DIR: an MLflow file store "
     "(DIR/mlruns), TensorBoard events (DIR/tensorboard) and "
     "DIR/metrics.jsonl"},
    {"--run-name", "NAME", Train, "the MLflow run's name"},
    {"--checkpoint-dir", "DIR", Train,
     "save parameters, optimizer state and the step in DIR/step_<N> "
     "(atomically; after the last step, and every --checkpoint-every)"},
    {"--checkpoint-every", "N", Train, "steps between checkpoints"},
    {"--keep", "K", Train, "keep the newest K checkpoints (default all)"},
    {"--checkpoint-async", nullptr, Train,
     "write checkpoints from a thread while training goes on (the state is "
     "copied at the step; committed once every rank has written; the last "
     "step's and a stop's are written at once)"},
    {"--resume", nullptr, Train,
     "continue from the newest complete checkpoint in --checkpoint-dir "
     "(written under any plan), up to --steps"},
    {"--save-params", "DIR", Train,
     "write the trained parameters as DIR/<name>.npy"},
    {"--output-dir", "DIR", Inference, "write the outputs as DIR/0.npy, ..."},
    {"--print", nullptr, Inference, "print the outputs' shapes and values"},
    {"--repeat", "N", Inference,
     "run the model N times on the same inputs (default 1; with --timing: "
     "the first and the mean later times; the outputs are the last run's)"},
    {"--threads", "T", Both,
     "threads per rank (default: the node's cores shared by its ranks)"},
    {"--outer-lr", "LR", Train,
     "local SGD plans: the outer step's learning rate (default 0.7)"},
    {"--outer-momentum", "M", Train,
     "local SGD plans: the outer step's Nesterov momentum (default 0.9)"},
    {"--comm-timeout", "S", Train,
     "end the job when a rank waits S seconds for a collective or transfer "
     "(a lost or hung rank; default 300)"},
    {"--timing", nullptr, Both,
     "print the first and the mean later step times to stderr"},
    {"--profile-kernels", nullptr, Train,
     "print each rank's GPU time by kernel and cuBLASLt call over the "
     "steps to stderr (CUDA executables; events around every launch)"},
    {"--help", nullptr, Both, "this help"},
};

int kindBit(Program::Kind kind) {
  return kind == Program::Train ? Train : Inference;
}

bool parseInt(const char *text, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (errno || !*text || *end)
    return false;
  out = v;
  return true;
}

} // namespace

bool ober::rt::parseOptions(int argc, char **argv, Program::Kind kind,
                            Options &out, std::string &error) {
  int64_t decaySteps = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    size_t eq = arg.find('=');
    bool inlineValue = arg.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inlineValue) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    const OptionInfo *info = nullptr;
    for (const OptionInfo &o : kOptions)
      if (arg == o.name && (o.kinds & kindBit(kind)))
        info = &o;
    if (!info) {
      error = "unknown option '" + arg + "' (see --help)";
      return false;
    }
    if (info->value && !inlineValue) {
      if (i + 1 >= argc) {
        error = arg + " needs a value (" + info->value + ")";
        return false;
      }
      value = argv[++i];
    } else if (!info->value && inlineValue) {
      error = arg + " takes no value";
      return false;
    }
    auto bad = [&](const char *what) {
      error = arg + " must be " + what + ", got '" + value + "'";
      return false;
    };
    int64_t n = 0;
    if (arg == "--input") {
      out.inputs.push_back(value);
    } else if (arg == "--steps") {
      if (!parseInt(value.c_str(), n) || n < 0)
        return bad("a non-negative integer");
      out.steps = n;
    } else if (arg == "--repeat") {
      if (!parseInt(value.c_str(), n) || n < 1)
        return bad("a positive integer");
      out.repeat = n;
    } else if (arg == "--lr" || arg == "--min-lr") {
      char *end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !std::isfinite(v) || v < 0)
        return bad("a finite non-negative number");
      (arg == "--lr" ? out.lr.peak : out.lr.min) = v;
    } else if (arg == "--lr-schedule") {
      if (!parseLRScheduleKind(value, out.lr.kind))
        return bad((std::string("one of ") + lrScheduleKinds()).c_str());
    } else if (arg == "--warmup-steps" || arg == "--decay-steps") {
      if (!parseInt(value.c_str(), n) || n < 0)
        return bad("a non-negative integer");
      (arg == "--warmup-steps" ? out.lr.warmup : decaySteps) = n;
    } else if (arg == "--init-seed") {
      if (!parseInt(value.c_str(), n) || n < 0)
        return bad("a non-negative integer");
      out.initSeed = static_cast<uint64_t>(n);
    } else if (arg == "--weights") {
      out.weights = value;
    } else if (arg == "--save-params") {
      out.saveParams = value;
    } else if (arg == "--output-dir") {
      out.outputDir = value;
    } else if (arg == "--threads") {
      if (!parseInt(value.c_str(), n) || n < 1 || n > 4096)
        return bad("a positive integer");
      out.threads = static_cast<int>(n);
    } else if (arg == "--data") {
      out.data = value;
    } else if (arg == "--data-log") {
      out.dataLog = value;
    } else if (arg == "--data-seed") {
      if (!parseInt(value.c_str(), n) || n < 0)
        return bad("a non-negative integer");
      out.dataSeed = static_cast<uint64_t>(n);
    } else if (arg == "--log-dir") {
      out.logDir = value;
    } else if (arg == "--run-name") {
      out.runName = value;
    } else if (arg == "--checkpoint-dir") {
      out.checkpointDir = value;
    } else if (arg == "--checkpoint-every" || arg == "--keep") {
      if (!parseInt(value.c_str(), n) || n < 1)
        return bad("a positive integer");
      (arg == "--keep" ? out.keep : out.checkpointEvery) = n;
    } else if (arg == "--resume") {
      out.resume = true;
    } else if (arg == "--checkpoint-async") {
      out.checkpointAsync = true;
    } else if (arg == "--outer-lr" || arg == "--outer-momentum") {
      char *end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(v >= 0))
        return bad("a non-negative number");
      (arg == "--outer-lr" ? out.outerLearningRate : out.outerMomentum) = v;
    } else if (arg == "--comm-timeout") {
      char *end = nullptr;
      out.commTimeout = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !(out.commTimeout > 0))
        return bad("a positive number of seconds");
    } else if (arg == "--print") {
      out.print = true;
    } else if (arg == "--timing") {
      out.timing = true;
    } else if (arg == "--profile-kernels") {
      out.profileKernels = true;
    } else if (arg == "--help") {
      out.help = true;
    }
  }
  out.lr.decaySteps = decaySteps >= 0 ? decaySteps : out.steps;
  if (!out.data.empty() && !out.inputs.empty()) {
    error = "--data and --input both give batches; pick one";
    return false;
  }
  if ((out.resume || out.checkpointEvery || out.keep || out.checkpointAsync) &&
      out.checkpointDir.empty()) {
    error = "--resume, --checkpoint-every, --keep and --checkpoint-async "
            "need --checkpoint-dir";
    return false;
  }
  error = out.lr.check();
  return error.empty();
}

std::string ober::rt::usage(const char *self, const Program &program) {
  std::ostringstream os;
  bool train = program.kind == Program::Train;
  os << "usage: " << self
     << (train ? " --input FILE.npy ... [--steps N] [--lr LR] [options]\n"
               : " --input FILE.npy ... [--output-dir DIR] [options]\n")
     << "\n"
     << (train ? "Trains " : "Runs ") << "the model compiled by ober-compile"
     << (program.model.empty() ? "" : " from " + program.model) << ".\n";
  os << "\nInputs:\n";
  for (const ProgramArg &a : program.args)
    if (a.role == ArgRole::Batch || a.role == ArgRole::Input)
      os << "  " << a.name << ": " << dtypeName(a.dtype) << " "
         << shapeText(a.shape) << "\n";
  if (train)
    os << "Prints 'step <i> loss <value>' after each step.\n";
  os << "\nOptions:\n";
  for (const OptionInfo &o : kOptions) {
    if (!(o.kinds & kindBit(program.kind)))
      continue;
    std::string head = std::string(o.name) + (o.value ? std::string(" ") + o.value : "");
    os << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ')
       << o.help << "\n";
  }
  return os.str();
}
