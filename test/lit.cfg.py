# -*- Python -*-
# lit configuration for the ober regression tests. test/ mirrors lib/.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "OBER"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ober_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%ober_src_root", config.ober_src_root))
# Debian's python3 has numpy, onnx and torch; a pyenv python3 first in PATH
# may not.
config.substitutions.append(("%python", "/usr/bin/python3"))
config.substitutions.append(
    ("%onnxtext", "/usr/bin/python3 " + config.ober_src_root + "/utils/onnx/onnxtext.py"))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Optional components found at configure time (cuda, nccl, level-zero, mpi,
# onednn, torch) become lit features for REQUIRES: lines.
for feature in config.ober_lit_features.split(";"):
    if feature:
        config.available_features.add(feature)

tool_dirs = [config.ober_tools_dir, config.llvm_tools_dir]
# MLIR's runner libraries (printMemrefF32) for tests that run lowered code.
config.substitutions.append(
    ("%mlir_lib_dir", os.path.join(config.llvm_tools_dir, "..", "lib")))
llvm_config.add_tool_substitutions(["ober-opt", "ober-translate", "ober-run", "ober-compile", "ober-launch", "ober-calibrate", "not", "count", "split-file",
                                    "mlir-translate", "mlir-opt", "mlir-runner"],
                                   tool_dirs)
