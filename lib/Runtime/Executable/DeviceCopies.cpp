//===- DeviceCopies.cpp - a step on copies of its arguments ---------------===//
//
// Part of Ober-Train's runtime (no MLIR). What a target whose buffers are
// not the host's does for a step (Target.h: invokeOnCopies): its arguments
// go to the device (the parameters and optimizer state only once, then kept
// there by the mirror), the program runs on them, and what it returned in
// new buffers comes back, except the new values of parameters and state,
// which the mirror takes over. The CUDA target runs every step this way;
// the CPU target does with OBER_RT_COPY_ARGUMENTS=1, which is how the
// tests check these rules (and the points where the training loop syncs
// the host) on real programs without a GPU.
//
//===----------------------------------------------------------------------===//

#include "DeviceMirror.h"
#include "Target.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

using namespace ober::rt;

namespace {

/// Device blocks given back when the step is done with them (the device
/// orders the frees after the work queued before them).
struct StepBlocks {
  DeviceMirror::Device &memory;
  std::vector<void *> blocks;
  void *take(size_t bytes) {
    blocks.push_back(memory.allocate(std::max<size_t>(bytes, 1)));
    return blocks.back();
  }
  ~StepBlocks() {
    for (void *b : blocks) {
      try {
        memory.free(b);
      } catch (...) { // the step's own error is the one to report
      }
    }
  }
};

/// Where a result the program returned lives: a block it allocated, or
/// inside an argument's copy (then it is that argument's host buffer).
struct ResultPlace {
  const HostTensor *host = nullptr;
  char *deviceBase = nullptr;
};

/// What a stage does with each argument: whether it touches it
/// (Program::touches; another stage's is a stand-in without bytes) and
/// whether a result is written into it in place.
struct ArgUse {
  std::vector<bool> touched, written;
  ArgUse(const Program &program, int64_t stage)
      : touched(program.args.size()), written(program.args.size()) {
    for (size_t i = 0; i < program.args.size(); ++i)
      touched[i] = program.touches(stage, i);
    for (const ProgramResult &r : program.results)
      if (int64_t a = r.inPlaceIn(stage); a >= 0)
        written[a] = true;
  }
  /// Whether argument `i` stays on the device once a step has used it: a
  /// parameter or optimizer state the step writes in place (not another
  /// stage's, which the function passes through in place untouched).
  bool staysOnDevice(const Program &program, size_t i) const {
    ArgRole role = program.args[i].role;
    return (role == ArgRole::Parameter || role == ArgRole::State) &&
           touched[i] && written[i];
  }
};

/// Whether result `r` is the new value of a parameter or optimizer state
/// this stage passes back next step.
bool returnsState(const ProgramResult &r, int64_t stage) {
  return r.arg >= 0 && (r.stage < 0 || r.stage == stage) &&
         (r.role == ResultRole::Parameter || r.role == ResultRole::State);
}

/// Refuses arguments that share bytes with another tensor's device copy,
/// or with another argument the step writes in place: each gets a device
/// copy of its own, and what the step wrote to one would not reach the
/// other (the executable gives every argument its own buffer; this keeps
/// a slip from corrupting training silently).
void refuseAliasing(const Program &program, const ArgUse &use,
                    const std::vector<HostTensor> &args,
                    const DeviceMirror &mirror) {
  struct Span {
    const char *begin, *end;
    size_t arg;
  };
  std::vector<Span> spans;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!use.touched[i] || args[i].byteSize() == 0)
      continue;
    if (mirror.overlapsAnother(args[i]))
      throw std::runtime_error("argument '" + program.args[i].name +
                               "' shares memory with another tensor kept on "
                               "the device");
    spans.push_back(
        {args[i].data(), args[i].data() + args[i].byteSize(), i});
  }
  std::sort(spans.begin(), spans.end(),
            [](const Span &a, const Span &b) { return a.begin < b.begin; });
  // Runs of spans that overlap one another: one written is one too many.
  for (size_t first = 0, k; first < spans.size(); first = k) {
    const char *end = spans[first].end;
    for (k = first + 1; k < spans.size() && spans[k].begin < end; ++k)
      end = std::max(end, spans[k].end);
    for (size_t j = first; k - first > 1 && j < k; ++j)
      if (use.written[spans[j].arg])
        throw std::runtime_error(
            "arguments '" + program.args[spans[first].arg].name + "' and '" +
            program.args[spans[first + 1].arg].name +
            "' share memory and the step writes one of them");
  }
}

} // namespace

std::vector<HostTensor>
ober::rt::invokeOnCopies(Entry entry, const Program &program, int64_t stage,
                         const std::vector<HostTensor> &args,
                         DeviceMirror::Device &memory, DeviceMirror &mirror) {
  mirror.collect();
  ArgUse use(program, stage);
  refuseAliasing(program, use, args, mirror);
  StepBlocks copies{memory, {}}, returned{memory, {}};
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<char *> onDevice;
  for (size_t i = 0; i < args.size(); ++i) {
    const HostTensor &t = args[i];
    char *d = mirror.find(t);
    if (!d && use.staysOnDevice(program, i))
      d = mirror.place(t);
    if (!d && !use.touched[i]) {
      // Another stage's: the descriptor's shape over one element (Run.cpp's
      // stand-in), which the program never reads.
      d = static_cast<char *>(copies.take(dtypeSize(t.dtype())));
    } else if (!d) {
      d = static_cast<char *>(copies.take(t.byteSize()));
      memory.toDevice(d, t.data(), t.byteSize());
    }
    std::vector<int64_t> words = t.descriptor();
    words[0] = words[1] = reinterpret_cast<int64_t>(d);
    descriptors.push_back(std::move(words));
    onDevice.push_back(d);
  }
  std::vector<int64_t> results = callEntry(entry, program, stage, descriptors);

  std::vector<HostTensor> out;
  out.reserve(program.results.size()); // ResultPlace points into it
  std::map<void *, ResultPlace> blocks;
  for (size_t i = 0; i < args.size(); ++i) // a stand-in has no bytes
    blocks[onDevice[i]] = {use.touched[i] ? &args[i] : nullptr, onDevice[i]};
  size_t at = 0;
  for (const ProgramResult &r : program.results) {
    size_t bytes =
        static_cast<size_t>(elementCount(r.shape)) * dtypeSize(r.dtype);
    if (int64_t arg = r.inPlaceIn(stage); arg >= 0) { // written in place
      if (!use.touched[arg]) {
        // Another stage's value, passed through unchanged.
      } else if (mirror.find(args[arg])) {
        mirror.wrote(args[arg]);
      } else {
        memory.toHost(args[arg].data(), onDevice[arg], bytes);
      }
      out.push_back(args[arg]);
      continue;
    }
    auto *block = reinterpret_cast<void *>(results[at]);
    char *data = reinterpret_cast<char *>(results[at + 1]) +
                 results[at + 2] * dtypeSize(r.dtype);
    at += 3 + 2 * r.shape.size();
    auto known = blocks.find(block);
    if (known == blocks.end()) { // a new buffer of the program's
      HostTensor t(r.dtype, r.shape);
      if (returnsState(r, stage)) { // stays on the device for the next step
        mirror.adopt(t, block, data);
      } else {
        memory.toHost(t.data(), data, bytes);
        returned.blocks.push_back(block);
      }
      out.push_back(t);
      blocks[block] = {&out.back(), data};
      continue;
    }
    // Inside a buffer already known: its host tensor holds the bytes
    // (when they lie within it; else a copy of their own).
    const ResultPlace &place = known->second;
    if (!place.host)
      throw std::runtime_error("result " + std::to_string(out.size()) +
                               " of stage " + std::to_string(stage) +
                               " lies in an argument the stage never reads");
    std::ptrdiff_t offset = data - place.deviceBase;
    if (offset < 0 ||
        static_cast<size_t>(offset) + bytes > place.host->byteSize()) {
      HostTensor t(r.dtype, r.shape);
      memory.toHost(t.data(), data, bytes);
      out.push_back(t);
      continue;
    }
    char *host = place.host->data() + offset;
    memory.toHost(host, data, bytes);
    out.push_back(HostTensor::share(*place.host, r.dtype, r.shape, host));
  }
  memory.finish();
  return out;
}
