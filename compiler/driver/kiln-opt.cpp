//===- kiln-opt.cpp - run Kiln's passes on textual IR
//----------------------===//
//
// mlir-opt with Kiln's dialects and passes, for lit tests and for reducing
// a failure:
//   kiln-opt --kiln-assign-layouts input.mlir
//   kiln-opt --kiln-pipeline="arch=sm_90a num-warps=8 stop-after=gpu" \
//       DUMP/01-kiln.mlir            (what kilnc does after its front end)
//
//===----------------------------------------------------------------------===//
#include "compiler/conversion/KilnPipeline.h"
#include "compiler/ir/Dialects.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  kiln::registerKilnPasses();
  kiln::registerKilnPipeline();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerReconcileUnrealizedCastsPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
