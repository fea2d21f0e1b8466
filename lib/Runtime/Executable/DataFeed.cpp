//===- DataFeed.cpp - a rank's share of each batch from a data set --------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "DataFeed.h"

#include "ober/Runtime/Files.h"

#include <cstdio>

using namespace ober::rt;

bool DataFeed::open(const Program &p, const Options &options,
                    const Placement &w, std::string &error) {
  program = &p;
  where = &w;
  std::vector<SampleSpec> specs;
  int64_t perStep = p.samplesPerStep;
  for (size_t i : p.argsWith(ArgRole::Batch)) {
    const ProgramArg &a = p.args[i];
    std::vector<int64_t> global = globalShape(a.shape, a.split, w.grid);
    // The leading dimensions hold the step's samples ([samples, ...] or
    // [micro-batches, samples, ...]).
    size_t lead = !global.empty() && global[0] == perStep ? 1
                  : global.size() > 1 && global[0] * global[1] == perStep
                      ? 2
                      : 0;
    if (lead == 0) {
      error = "--data: batch input '" + a.name + "' " + shapeText(global) +
              " does not hold the step's " + std::to_string(perStep) +
              " samples along its leading dimensions";
      return false;
    }
    for (size_t d = lead; d < global.size(); ++d)
      if (d < a.split.axes.size() && a.split.axes[d] >= 0) {
        error = "--data: batch input '" + a.name +
                "' is split within a sample; data sets feed inputs split "
                "by samples only";
        return false;
      }
    std::vector<std::vector<int64_t>> index =
        blockIndices(a.shape, a.split, w.grid, w.coords);
    Input in{i, p.touches(w.stage, i), {}, dtypeSize(a.dtype)};
    for (size_t d = lead; d < a.shape.size(); ++d)
      in.sampleBytes *= static_cast<size_t>(a.shape[d]);
    if (lead == 1)
      in.slots = index[0];
    else
      for (int64_t g0 : index[0])
        for (int64_t g1 : index[1])
          in.slots.push_back(g0 * global[1] + g1);
    inputs.push_back(std::move(in));
    specs.push_back({a.name, a.dtype,
                     std::vector<int64_t>(global.begin() + lead, global.end())});
  }
  data = openDataset(options.data, specs, error);
  if (!data)
    return false;
  if (data->size() < perStep) {
    error = options.data + ": " + std::to_string(data->size()) +
            " samples, fewer than one step's " + std::to_string(perStep);
    return false;
  }
  order = std::make_unique<SampleOrder>(data->size(), options.dataSeed);
  if (!options.dataLog.empty()) {
    makeDirectories(options.dataLog);
    char name[64];
    std::snprintf(name, sizeof(name), "/rank_%05lld.txt",
                  static_cast<long long>(w.rank));
    log = options.dataLog + name;
  }
  return true;
}

std::vector<HostTensor> DataFeed::read(int64_t step) {
  int64_t base = step * program->samplesPerStep;
  std::vector<std::vector<int64_t>> ids;
  for (const Input &in : inputs) {
    ids.emplace_back();
    for (int64_t slot : in.slots)
      ids.back().push_back(order->at(base + slot));
  }
  if (!log.empty())
    if (std::FILE *f = std::fopen(log.c_str(), "a")) {
      std::fprintf(f, "step %lld", static_cast<long long>(step));
      for (int64_t id : ids.front())
        std::fprintf(f, " %lld", static_cast<long long>(id));
      std::fprintf(f, "\n");
      std::fclose(f);
    }
  std::vector<HostTensor> out;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!inputs[k].used) {
      out.emplace_back();
      continue;
    }
    const ProgramArg &a = program->args[inputs[k].arg];
    HostTensor t(a.dtype, a.shape);
    for (size_t j = 0; j < ids[k].size(); ++j)
      data->read(k, ids[k][j], t.data() + j * inputs[k].sampleBytes);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<HostTensor> DataFeed::batch(int64_t step) {
  std::vector<HostTensor> now = pending == step ? next.get() : read(step);
  // The next step's samples are read on a helper thread while this step
  // runs (one read at a time: the next waits for it).
  int64_t upcoming = step + 1;
  pending = upcoming;
  next = std::async(std::launch::async, [this, upcoming] {
    return read(upcoming);
  });
  return now;
}
