//===- kiln-opt.cpp - run Kiln's passes on textual IR ----------------------===//
//
// mlir-opt with Kiln's dialects and passes, for lit tests:
//   kiln-opt --kiln-assign-layouts input.mlir
//
//===----------------------------------------------------------------------===//
#include "compiler/ir/Dialects.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kiln::registerAllDialects(registry);
  kiln::registerKilnPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerReconcileUnrealizedCastsPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
