# lit configuration for Kiln's FileCheck suites: tests/lit (passes, through
# kiln-opt and kilnc) and tests/frontend (kernel source → kiln IR and every
# diagnostic). Tools come from --param kiln_bin_dir=DIR (CMake and Bazel pass
# it) and FileCheck/not from --param llvm_tools_dir=DIR.
import os

import lit.formats

config.name = "kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)

bin_dir = lit_config.params.get("kiln_bin_dir")
llvm_tools = lit_config.params.get("llvm_tools_dir", "/usr/lib/llvm-22/bin")
if not bin_dir:
    lit_config.fatal("pass --param kiln_bin_dir=DIR (the directory of kilnc and kiln-opt)")

def tool(name):
    path = os.path.join(bin_dir, name)
    if not os.path.exists(path):
        lit_config.fatal("missing tool: " + path)
    return path

config.substitutions.append(("%kilnc", tool("kilnc")))
config.substitutions.append(("%kiln-opt", tool("kiln-opt")))
config.substitutions.append(("%cuda", os.environ.get("CUDA_HOME") or "/usr/local/cuda"))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "lit", "Inputs")))
config.environment["PATH"] = os.pathsep.join([llvm_tools, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("CUDA_HOME", "HOME", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# Upstream Triton's tutorials, fetched unchanged into .upstream/ (never
# committed; bench/README.md says how): the tests that compile them run only
# where they are.
upstream = os.path.join(os.path.dirname(config.test_source_root), ".upstream")
if os.path.exists(os.path.join(upstream, "03-matrix-multiplication.py")):
    config.available_features.add("upstream-tutorial-03")
config.substitutions.append(("%upstream", upstream))
