//===- LaunchEnvTest.cpp - launch environment detection -------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/LaunchEnv.h"

#include "../TestSupport.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

namespace {
using Env = std::map<std::string, std::string>;

const char *lookup(const char *name, void *context) {
  auto &env = *static_cast<Env *>(context);
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}


struct Result {
  int rc;
  ober_rt_launch_env env;
  std::string error;
};

Result read(Env env) {
  Result r{};
  char error[256] = {0};
  r.rc = ober_rt_read_launch_env(&r.env, lookup, &env, error, sizeof error);
  r.error = error;
  return r;
}
} // namespace

int main() {
  {
    Result r = read({});
    EXPECT(r.rc == 0 && r.env.rank == 0 && r.env.world_size == 1);
    EXPECT(std::strcmp(r.env.launcher, "none") == 0);
  }
  {
    Result r = read({{"OMPI_COMM_WORLD_RANK", "5"},
                     {"OMPI_COMM_WORLD_SIZE", "8"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                     {"RANK", "0"},
                     {"WORLD_SIZE", "1"}});
    EXPECT(r.rc == 0 && r.env.rank == 5 && r.env.world_size == 8);
    EXPECT(r.env.local_rank == 1 && r.env.local_size == 4);
    EXPECT(std::strcmp(r.env.launcher, "openmpi") == 0);
  }
  {
    Result r = read({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"},
                     {"SLURM_LOCALID", "1"}});
    EXPECT(r.rc == 0 && r.env.rank == 3 && r.env.local_rank == 1);
    EXPECT(std::strcmp(r.env.launcher, "slurm") == 0);
  }
  {
    Result r = read({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"},
                     {"LOCAL_WORLD_SIZE", "2"}});
    EXPECT(r.rc == 0 && r.env.rank == 2 && r.env.local_size == 2);
    EXPECT(std::strcmp(r.env.launcher, "torchrun") == 0);
  }
  {
    Result r = read({{"RANK", "4"}, {"WORLD_SIZE", "4"}});
    EXPECT(r.rc != 0 && r.error.find("RANK=4") != std::string::npos);
  }
  {
    Result r = read({{"RANK", "x1"}, {"WORLD_SIZE", "4"}});
    EXPECT(r.rc != 0 && r.error.find("RANK='x1'") != std::string::npos);
  }
  {
    Result r = read({{"PMI_RANK", "0"}});
    EXPECT(r.rc != 0 && r.error.find("PMI_SIZE") != std::string::npos);
  }
  {
    Result r = read({{"RANK", "0"}, {"WORLD_SIZE", "0"}});
    EXPECT(r.rc != 0 && r.error.find("WORLD_SIZE") != std::string::npos);
  }
  {
    Result r = read({{"RANK", "1"}, {"WORLD_SIZE", "2"},
                     {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "3"}});
    EXPECT(r.rc != 0 && r.error.find("LOCAL_WORLD_SIZE=3") != std::string::npos);
  }
  return testSummary();
}
