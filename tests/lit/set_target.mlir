// RUN: %kiln-opt --kiln-set-target="arch=sm_90a" %s | FileCheck %s
// RUN: %kiln-opt --kiln-set-target %s | FileCheck %s --check-prefix=DEFAULT
// RUN: not %kiln-opt --kiln-set-target="arch=sm_91" %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// kiln-set-target names the module's target, which later passes ask through
// TargetInfo (compiler/ir/TargetInfo.h); a name already there is replaced,
// sm_80 is the default, and an arch TargetInfo does not know fails here,
// once, rather than in some later pass.

// CHECK: module attributes {kiln_gpu.target = "sm_90a"}
// DEFAULT: module attributes {kiln_gpu.target = "sm_80"}
// UNKNOWN: error: unknown target architecture 'sm_91'
module attributes {kiln_gpu.target = "sm_86"} {
  func.func @kernel() {
    return
  }
}
