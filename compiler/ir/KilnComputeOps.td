//===- KilnComputeOps.td - computations arith/math lack ----*- tablegen -*-===//
//
// Element-wise operations that upstream arith and math do not provide
// (IEEE-rounded sqrt and division, calls into libdevice, inline PTX) and the
// matrix product. Verifiers are in KilnComputeOps.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPUTE_OPS_TD
#define KILN_COMPUTE_OPS_TD

def Kiln_FloatLike : AnyTypeOf<[AnyFloat, RankedTensorOf<[AnyFloat]>]>;

def Kiln_PreciseSqrtOp : Kiln_Op<"precise_sqrt", [Pure, Elementwise,
    SameOperandsAndResultType]> {
  let summary = "Square root rounded to nearest (IEEE), as tl.sqrt_rn";
  let description = [{
    math.sqrt may be approximate on GPUs (as tl.sqrt is); this one is
    correctly rounded.
  }];
  let arguments = (ins Kiln_FloatLike:$x);
  let results = (outs Kiln_FloatLike:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def Kiln_PreciseDivFOp : Kiln_Op<"precise_divf", [Pure, Elementwise,
    SameOperandsAndResultType]> {
  let summary = "Division rounded to nearest (IEEE), as tl.div_rn";
  let arguments = (ins Kiln_FloatLike:$x, Kiln_FloatLike:$y);
  let results = (outs Kiln_FloatLike:$result);
  let assemblyFormat = "$x `,` $y attr-dict `:` type($x)";
}

def Kiln_ExternElementwiseOp : Kiln_Op<"extern_elementwise", [Elementwise,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Element-wise call of a device-library function";
  let description = [{
    Applies the external function `symbol` (a libdevice function such as
    `__nv_expf`) to the operands element by element. Tensor operands and
    the result share one shape; scalars are allowed when all are scalars.
    Without `pure` the call is assumed to touch memory.
  }];
  let arguments = (ins Variadic<AnyType>:$srcs, StrAttr:$symbol,
                       StrAttr:$libname, UnitAttr:$pure);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$symbol `(` $srcs `)` attr-dict `:` functional-type($srcs, $result)";
  let hasVerifier = 1;
}

def Kiln_InlineAsmElementwiseOp : Kiln_Op<"inline_asm_elementwise", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Element-wise inline assembly, as tl.inline_asm_elementwise";
  let description = [{
    Runs `asm_string` (PTX, with LLVM inline-asm `constraints`) on
    `packed_element` consecutive elements of every operand at a time,
    producing the results. Tensor operands and results share one shape.
    Without `pure` the assembly is assumed to have side effects.
  }];
  let arguments = (ins Variadic<AnyType>:$args, StrAttr:$asm_string,
                       StrAttr:$constraints, BoolAttr:$pure,
                       ConfinedAttr<I32Attr, [IntMinValue<1>]>:$packed_element);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = "$asm_string `(` $args `)` attr-dict `:` functional-type($args, $results)";
  let hasVerifier = 1;
}

def Kiln_DotOp : Kiln_Op<"dot", [Pure,
    AllTypesMatch<["c", "d"]>]> {
  let summary = "Matrix product with accumulation: d = a × b + c";
  let description = [{
    a is [B,] M × K, b is [B,] K × N, c and d are [B,] M × N; K is at least
    16, and so are M and N of a 2-D dot (a batched one may be thinner: its
    mma tiles hold it repeated). The operands share an element type (or
    are both fp8); `input_precision` says how fp32 operands are
    multiplied; `max_num_imprecise_acc` bounds fp8 products accumulated at
    reduced precision before a full-precision add. When it is absent the
    target's default applies (upstream Triton: 2^30 for fp8 operands on
    sm_90, else 0).
  }];
  let arguments = (ins AnyRankedTensor:$a, AnyRankedTensor:$b,
                       AnyRankedTensor:$c, Kiln_InputPrecision:$input_precision,
                       OptionalAttr<I32Attr>:$max_num_imprecise_acc);
  let results = (outs AnyRankedTensor:$d);
  let assemblyFormat = [{
    $a `,` $b `,` $c `,` $input_precision attr-dict `:` type($a) `*` type($b) `->` type($d)
  }];
  let hasVerifier = 1;  let hasCanonicalizer = 1;
}

#endif // KILN_COMPUTE_OPS_TD
