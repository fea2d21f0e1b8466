#===- OberOptionalDeps.cmake - optional components -----------------------===#
#
# Each optional component has an OBER_ENABLE_<X> option (ON by default). When
# the option is ON and the component is found, OBER_HAVE_<X> is set and the
# component is exposed to lit as the feature named in the table below. When it
# is ON but missing, the build goes on without it and says so; pass
# -DOBER_REQUIRE_<X>=ON to make a missing component a configure error.
#
#===----------------------------------------------------------------------===#
include(CMakeParseArguments)

set(OBER_LIT_FEATURES "" CACHE INTERNAL "lit features of optional components")

function(ober_optional_component name feature found)
  option(OBER_ENABLE_${name} "Enable the optional ${name} component" ON)
  option(OBER_REQUIRE_${name} "Fail configuration when ${name} is missing" OFF)
  set(have OFF)
  if(OBER_ENABLE_${name} AND ${found})
    set(have ON)
    set(OBER_LIT_FEATURES "${OBER_LIT_FEATURES};${feature}" CACHE INTERNAL "")
  elseif(OBER_ENABLE_${name} AND OBER_REQUIRE_${name})
    message(FATAL_ERROR "OBER_REQUIRE_${name} is ON but ${name} was not found")
  endif()
  set(OBER_HAVE_${name} ${have} PARENT_SCOPE)
  message(STATUS "Optional component ${name}: ${have} (lit feature '${feature}')")
endfunction()

# CUDA toolkit (CUDA 13 lives in /usr/local/cuda on our machines).
list(APPEND CMAKE_PREFIX_PATH /usr/local/cuda)
find_package(CUDAToolkit QUIET)
ober_optional_component(CUDA cuda CUDAToolkit_FOUND)
# The CUDA runtime (lib/Runtime/Devices) needs only the toolkit's headers:
# it opens the driver and the libraries with dlopen.
set(OBER_HAVE_CUDA_TOOLKIT ${OBER_HAVE_CUDA})
set(OBER_CUDA_INCLUDE_DIR "${CUDAToolkit_INCLUDE_DIRS}")

# NCCL ships beside the CUDA toolkit.
find_library(OBER_NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu)
find_path(OBER_NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include)
if(OBER_NCCL_LIBRARY AND OBER_NCCL_INCLUDE_DIR AND CUDAToolkit_FOUND)
  set(_ober_nccl_found TRUE)
else()
  set(_ober_nccl_found FALSE)
endif()
ober_optional_component(NCCL nccl _ober_nccl_found)

# Level Zero loader and headers (libze-dev).
find_library(OBER_LEVEL_ZERO_LIBRARY ze_loader)
find_path(OBER_LEVEL_ZERO_INCLUDE_DIR level_zero/ze_api.h)
if(OBER_LEVEL_ZERO_LIBRARY AND OBER_LEVEL_ZERO_INCLUDE_DIR)
  set(_ober_ze_found TRUE)
else()
  set(_ober_ze_found FALSE)
endif()
ober_optional_component(LEVEL_ZERO level-zero _ober_ze_found)

# MPI (Open MPI on Debian).
find_package(MPI QUIET COMPONENTS C)
ober_optional_component(MPI mpi MPI_C_FOUND)

# oneDNN (libdnnl-dev, 2.x API).
find_library(OBER_DNNL_LIBRARY dnnl)
find_path(OBER_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
if(OBER_DNNL_LIBRARY AND OBER_DNNL_INCLUDE_DIR)
  set(_ober_dnnl_found TRUE)
else()
  set(_ober_dnnl_found FALSE)
endif()
ober_optional_component(ONEDNN onednn _ober_dnnl_found)

# libtorch (libtorch-dev) for the TorchScript importer.
find_library(OBER_TORCH_LIBRARY torch)
find_path(OBER_TORCH_INCLUDE_DIR torch/script.h
  PATH_SUFFIXES torch/csrc/api/include)
if(OBER_TORCH_LIBRARY AND OBER_TORCH_INCLUDE_DIR)
  set(_ober_torch_found TRUE)
else()
  set(_ober_torch_found FALSE)
endif()
ober_optional_component(TORCH torch _ober_torch_found)
