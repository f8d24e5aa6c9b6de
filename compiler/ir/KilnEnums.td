//===- KilnEnums.td - enums the kiln and kiln_gpu ops share -*- tablegen -*-===//
//
// Included by the kiln ops (whose tablegen run generates the C++ enums) and
// by the kiln_gpu ops that carry the same choices further down.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_ENUMS_TD
#define KILN_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Kiln_InputPrecision : I32EnumAttr<"InputPrecision",
    "how tl.dot treats fp32 operands", [
      I32EnumAttrCase<"TF32", 0, "tf32">,
      I32EnumAttrCase<"TF32x3", 1, "tf32x3">,
      I32EnumAttrCase<"IEEE", 2, "ieee">,
      I32EnumAttrCase<"BF16x3", 3, "bf16x3">,
      I32EnumAttrCase<"BF16x6", 4, "bf16x6">,
    ]> {
  let cppNamespace = "::kiln";
}

#endif // KILN_ENUMS_TD
