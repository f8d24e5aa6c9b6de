//===- KilnDialect.td - the tensor-level kiln dialect ------*- tablegen -*-===//
//
// The kiln dialect is Kiln's hardware-independent kernel IR: the operations of
// the Triton language that upstream MLIR dialects (arith, math, scf) do not
// already provide, over builtin ranked tensors and a typed global pointer.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level operations of Triton-language kernels";
  let description = [{
    Programs of the kiln dialect describe what one program instance (one CTA)
    of a kernel computes, over whole tensors, without saying which thread
    holds which element. The kiln_gpu dialect adds that by layouts.
  }];
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

class Kiln_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Kiln_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Kiln_PointerType : Kiln_Type<"Pointer", "ptr"> {
  let summary = "A pointer to global memory holding elements of one type";
  let parameters = (ins "::mlir::Type":$pointeeType);
  let assemblyFormat = "`<` $pointeeType `>`";
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointeeType), [{
      return $_get(pointeeType.getContext(), pointeeType);
    }]>
  ];
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
