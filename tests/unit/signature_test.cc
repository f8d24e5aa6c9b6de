// kilnc's `-s` signatures (compiler/frontend/Signature.h): the `:16` and `:1`
// hints, what --aligned adds, and the unit-stride variant's rewriting.

#include "compiler/frontend/Signature.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::frontend {
namespace {

using ::testing::HasSubstr;

// matmul(a_ptr, b_ptr, M, stride_am, stride_ak, flag, BLOCK: tl.constexpr)
std::vector<ParamDecl> Params() {
  return {{"a_ptr", false, {}},     {"b_ptr", false, {}},
          {"M", false, {}},         {"stride_am", false, {}},
          {"stride_ak", false, {}}, {"flag", false, {}},
          {"BLOCK", true, {}}};
}

KernelSpec Parse(const std::string &signature, bool aligned = false) {
  llvm::Expected<KernelSpec> spec =
      parseSignature(signature, Params(), aligned);
  if (!spec) {
    ADD_FAILURE() << llvm::toString(spec.takeError());
    return {};
  }
  return *spec;
}

std::string ErrorOf(const std::string &signature) {
  llvm::Expected<KernelSpec> spec =
      parseSignature(signature, Params(), /*aligned=*/false);
  if (spec)
    return "no error";
  return llvm::toString(spec.takeError());
}

TEST(Signature, EqualToOneLeavesTheEntryPoint) {
  KernelSpec spec = Parse("*fp16:16, *fp16, i32, i32:16, i32:1, i1, 64");
  ASSERT_EQ(spec.params.size(), 7u);
  const ParamSpec &strideAk = spec.params[4];
  EXPECT_TRUE(strideAk.equalToOne);
  EXPECT_FALSE(strideAk.isConstexpr);
  EXPECT_FALSE(strideAk.isKernelArgument());
  EXPECT_EQ(strideAk.type.str(), "i32"); // the type stays: the launcher's
  EXPECT_EQ(strideAk.divisibility, 1u);
  EXPECT_TRUE(spec.params[3].isKernelArgument());
  EXPECT_EQ(spec.params[3].divisibility, 16u);
  EXPECT_FALSE(spec.params[6].isKernelArgument()); // BLOCK
  EXPECT_EQ(spec.str(), "*fp16:16, *fp16, i32, i32:16, i32:1, i1, 64");
}

TEST(Signature, NamedFormTakesHintsToo) {
  KernelSpec spec = Parse("a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=i64, "
                          "stride_ak=i64:1, flag=i1, BLOCK=64, num_warps=8");
  EXPECT_TRUE(spec.params[4].equalToOne);
  EXPECT_EQ(spec.params[4].type.str(), "i64");
  EXPECT_EQ(spec.numWarps, 8u);
  EXPECT_EQ(spec.str(), "*fp16, *fp16, i32, i64, i64:1, i1, 64");
}

TEST(Signature, AlignedKeepsEqualToOne) {
  KernelSpec spec = Parse("*fp16, *fp16, i32, i32, i32:1, i1, 64",
                          /*aligned=*/true);
  EXPECT_EQ(spec.params[0].divisibility, 16u);
  EXPECT_EQ(spec.params[3].divisibility, 16u);
  EXPECT_TRUE(spec.params[4].equalToOne);
  EXPECT_EQ(spec.params[4].divisibility, 1u);
  EXPECT_EQ(spec.params[5].divisibility, 1u); // i1: never divisible
  EXPECT_EQ(spec.str(), "*fp16:16, *fp16:16, i32:16, i32:16, i32:1, i1, 64");
}

TEST(Signature, EqualToOneIsForIntegersOnly) {
  EXPECT_THAT(ErrorOf("*fp16:1, *fp16, i32, i32, i32, i1, 64"),
              HasSubstr("parameter 'a_ptr': ':1' (the argument equals 1) "
                        "applies to integer types i8..i64 and u8..u64 only, "
                        "got '*fp16:1'; pointers take ':16'"));
  EXPECT_THAT(ErrorOf("*fp16, *fp16, fp32:1, i32, i32, i1, 64"),
              HasSubstr("parameter 'M': ':1'"));
  EXPECT_THAT(ErrorOf("*fp16, *fp16, i32, i32, i32, i1:1, 64"),
              HasSubstr("parameter 'flag': ':1'"));
  EXPECT_THAT(ErrorOf("*fp16, *fp16, i32, i32:8, i32, i1, 64"),
              HasSubstr("parameter 'stride_am': unknown type 'i32:8'"));
}

TEST(Signature, WithEqualToOneRewritesTheNamedParameters) {
  EXPECT_EQ(withEqualToOne("a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=i32, "
                           "stride_ak=i32, flag=i1, BLOCK=64, num_warps=8",
                           Params(), {"stride_ak"}),
            "a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=i32, "
            "stride_ak=i32:1, flag=i1, BLOCK=64, num_warps=8");
  // A hint given before is replaced; the positional form by position.
  EXPECT_EQ(withEqualToOne("*fp16, *fp16, i32, i32:16, i32:16, i1, 64",
                           Params(), {"stride_am", "stride_ak"}),
            "*fp16, *fp16, i32, i32:1, i32:1, i1, 64");
  EXPECT_EQ(withEqualToOne("*fp16, *fp16, i32, i32, i32, i1, 64", Params(), {}),
            "*fp16, *fp16, i32, i32, i32, i1, 64");
  // A tuple parameter named among them stays as written (the signature
  // fuzzer's finding: `(i32:16, i32):1` did not parse).
  EXPECT_EQ(withEqualToOne("a_ptr=*fp16, b_ptr=*fp16, M=i32, "
                           "stride_am=(i32:16, i32), stride_ak=i32",
                           Params(), {"stride_am", "stride_ak"}),
            "a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=(i32:16, i32), "
            "stride_ak=i32:1");
  EXPECT_EQ(withEqualToOne("*fp16, *fp16, i32, (i32:16, i32), i32", Params(),
                           {"stride_am", "stride_ak"}),
            "*fp16, *fp16, i32, (i32:16, i32), i32:1");
}

// A parameter list naming one parameter twice (Python rejects such a def;
// the signature fuzzer made one, and withEqualToOne retyped both).
TEST(Signature, DuplicateParameterNamesAreRefused) {
  std::vector<ParamDecl> params = {
      {"x_ptr", false, {}}, {"n", false, {}}, {"x_ptr", false, {}}};
  llvm::Expected<KernelSpec> spec =
      parseSignature("*fp32, i32, i32", params, /*aligned=*/false);
  ASSERT_FALSE(bool(spec));
  EXPECT_EQ(llvm::toString(spec.takeError()),
            "the kernel has two parameters named 'x_ptr'");
}

// The aligned-pointers variant: every pointer the entry point takes `:16`,
// nothing more (integers, equal-to-1 arguments and descriptors stay as
// written).
TEST(Signature, AlignedPointersMarksOnlyThePointers) {
  KernelSpec spec = Parse("*fp16, *fp16:16, i32, i32:16, i32:1, i1, 64");
  assumeAlignedPointers(spec);
  EXPECT_EQ(spec.str(), "*fp16:16, *fp16:16, i32, i32:16, i32:1, i1, 64");
  std::vector<ParamDecl> params = {
      {"a_desc", false, {}}, {"p", false, {}}, {"BLOCK", true, {}}};
  llvm::Expected<KernelSpec> withDesc = parseSignature(
      "tensordesc<fp16[128,64]>, *fp32, 64", params, /*aligned=*/false);
  ASSERT_TRUE(static_cast<bool>(withDesc))
      << llvm::toString(withDesc.takeError());
  assumeAlignedPointers(*withDesc);
  EXPECT_EQ(withDesc->str(), "tensordesc<fp16[128,64]>, *fp32:16, 64");
}

// A tensor descriptor parameter: `tensordesc<T[d0,...]>`, one entry in
// either form although it holds commas; --aligned assumes its extents
// divisible by 16 (the hint `:16`), as it assumes the integers.
TEST(Signature, DescriptorTypesHoldCommas) {
  std::vector<ParamDecl> params = {
      {"a_desc", false, {}}, {"n", false, {}}, {"BLOCK", true, {}}};
  for (const char *signature :
       {"tensordesc<fp16[128, 64]>, i32, 64",
        "a_desc = tensordesc<fp16[128,64]>, n=i32, BLOCK=64"}) {
    llvm::Expected<KernelSpec> spec =
        parseSignature(signature, params, /*aligned=*/true);
    ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
    const ParamSpec &desc = spec->params[0];
    EXPECT_TRUE(desc.type.isTensorDescriptor());
    EXPECT_FALSE(desc.type.isBlockPointer());
    EXPECT_EQ(desc.type.blockShape, (llvm::SmallVector<int64_t>{128, 64}));
    EXPECT_EQ(desc.divisibility, 16u); // of its extents
    EXPECT_EQ(spec->params[1].divisibility, 16u);
    EXPECT_EQ(spec->str(), "tensordesc<fp16[128,64]>:16, i32:16, 64");
    // The rendered form parses back to the same assumptions.
    llvm::Expected<KernelSpec> again =
        parseSignature(spec->str(), params, /*aligned=*/false);
    ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
    EXPECT_EQ(again->params[0].divisibility, 16u);
    EXPECT_EQ(again->str(), spec->str());
    llvm::Expected<KernelSpec> general =
        parseSignature(signature, params, /*aligned=*/false);
    ASSERT_TRUE(static_cast<bool>(general));
    EXPECT_EQ(general->params[0].divisibility, 1u);
  }
  EXPECT_EQ(splitSignature("a=tensordesc<fp16[1,2]>, b=i32,, c=3").size(), 3u);
}

TEST(Signature, QuotedStringsHoldCommas) {
  // A string constexpr with a comma, written by hand and rendered back in
  // the positional form (found by the signature fuzzer), parses to one
  // entry both ways; an unclosed quote runs to the end.
  std::vector<ParamDecl> params = {
      {"x_ptr", false, {}}, {"MODE", true, {}}, {"N", true, {}}};
  llvm::Expected<KernelSpec> spec =
      parseSignature("x_ptr=*fp32, MODE=\"a, b\", N=4", params, false);
  ASSERT_TRUE(static_cast<bool>(spec)) << llvm::toString(spec.takeError());
  llvm::Expected<KernelSpec> again =
      parseSignature(spec->str(), params, /*aligned=*/false);
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->params[1].value.text, spec->params[1].value.text);
  EXPECT_EQ(again->params[2].value.text, "4");
  EXPECT_EQ(splitSignature("*fp32, 'x, y', 4").size(), 3u);
  // A double quote inside single quotes comes back in single quotes.
  llvm::Expected<KernelSpec> quoted =
      parseSignature("x_ptr=*fp32, MODE='tf\"3', N=4", params, false);
  ASSERT_TRUE(static_cast<bool>(quoted)) << llvm::toString(quoted.takeError());
  EXPECT_EQ(quoted->str(), "*fp32, 'tf\"3', 4");
  llvm::Expected<KernelSpec> back =
      parseSignature(quoted->str(), params, /*aligned=*/false);
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->params[1].value.text, "tf\"3");
  EXPECT_EQ(splitSignature("*fp32, \"x, y").size(), 2u);
}

TEST(Signature, BadDescriptorTypesSayWhy) {
  std::vector<ParamDecl> params = {{"a_desc", false, {}}};
  auto error = [&](const std::string &signature) {
    llvm::Expected<KernelSpec> spec =
        parseSignature(signature, params, /*aligned=*/false);
    return spec ? std::string("no error") : llvm::toString(spec.takeError());
  };
  EXPECT_THAT(error("a_desc=tensordesc<fp16[128,48]>"),
              HasSubstr("block dimension 48 is not a power of 2"));
  EXPECT_THAT(error("a_desc=tensordesc<i1[128]>"),
              HasSubstr("descriptors of i1 are not supported"));
  EXPECT_THAT(error("a_desc=tensordesc<fp16[128,64]>:1"),
              HasSubstr("a descriptor takes only the hint :16"));
  EXPECT_THAT(error("a_desc=tensordesc<fp16[128,64]>:32"),
              HasSubstr("a descriptor takes only the hint :16"));
  EXPECT_THAT(error("a_desc=tensordesc<fp16>"),
              HasSubstr("missing the block shape in brackets"));
  EXPECT_THAT(error("a_desc=tensordesc<fp16[128,64]"), HasSubstr("'>'"));
  EXPECT_THAT(error("a_desc=tensordesc<fp16[]>"),
              HasSubstr("is not a positive integer"));
}

TEST(Signature, ErrorsSuggestAndList) {
  EXPECT_THAT(ErrorOf("a_ptr=*fp16, b_ptr=*fp16, N=i32, stride_am=i32, "
                      "stride_ak=i32, flag=i1, BLOCK=64"),
              HasSubstr("the kernel has no parameter 'N' (did you mean "
                        "'M'?); its parameters are: a_ptr, b_ptr, M, "
                        "stride_am, stride_ak, flag, BLOCK"));
  EXPECT_THAT(ErrorOf("*fp17, *fp16, i32, i32, i32, i1, 64"),
              HasSubstr("unknown type '*fp17' (did you mean '*fp16'?)"));
  EXPECT_THAT(ErrorOf("*fp16, *fp16, i32"),
              HasSubstr("has 3 entries but the kernel has 7 parameters "
                        "(a_ptr, b_ptr, M, stride_am, stride_ak, flag, "
                        "BLOCK)"));
  EXPECT_THAT(ErrorOf("*fp16, b_ptr=*fp16, i32, i32, i32, i1, 64"),
              HasSubstr("mixes named (name=value) and positional entries"));
}

// A quoted string holding '=' is a positional value, not a named entry; the
// unit-stride rewrite reads the form the same way.
TEST(Signature, QuotedEqualsIsPositional) {
  std::vector<ParamDecl> params = {{"MODE", true, {}}, {"n", false, {}}};
  EXPECT_FALSE(isNamedSignature("'a=b', i32"));
  EXPECT_TRUE(isNamedSignature("MODE='a=b', n=i32"));
  llvm::Expected<KernelSpec> spec =
      parseSignature("'a=b', i32", params, /*aligned=*/false);
  ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  EXPECT_EQ(spec->params[0].value.text, "a=b");
  EXPECT_EQ(withEqualToOne("'a=b', i32", params, {"n"}), "'a=b', i32:1");
}

// A tuple parameter (upstream's `x.stride()` passed as one argument):
// elements with their own hints, constexpr values and nested tuples; its
// run-time elements are the entry point's parameters in order.
TEST(Signature, TupleParameters) {
  KernelSpec spec = Parse("a_ptr=*fp16, b_ptr=*fp16, M=i32, "
                          "stride_am=(i32, i64:16, i32:1), "
                          "stride_ak=(*fp32, (i32, 8), None), flag=i1, "
                          "BLOCK=64");
  const ParamSpec &strides = spec.params[3];
  ASSERT_TRUE(strides.isTuple);
  EXPECT_FALSE(strides.isKernelArgument());
  ASSERT_EQ(strides.elements.size(), 3u);
  EXPECT_EQ(strides.elements[0].displayName(), "stride_am[0]");
  EXPECT_EQ(strides.elements[1].type.str(), "i64");
  EXPECT_EQ(strides.elements[1].divisibility, 16u);
  EXPECT_TRUE(strides.elements[2].equalToOne);
  const ParamSpec &nested = spec.params[4];
  ASSERT_EQ(nested.elements.size(), 3u);
  EXPECT_TRUE(nested.elements[1].isTuple);
  EXPECT_EQ(nested.elements[1].elements[1].displayName(), "stride_ak[1][1]");
  EXPECT_TRUE(nested.elements[1].elements[1].isConstexpr);
  EXPECT_EQ(nested.elements[1].elements[1].value.intValue, 8);
  EXPECT_TRUE(nested.elements[2].isConstexpr); // None
  EXPECT_EQ(spec.str(), "*fp16, *fp16, i32, (i32, i64:16, i32:1), "
                        "(*fp32, (i32, 8), None), i1, 64");

  std::vector<std::string> leaves;
  for (const ParamSpec *leaf : spec.leaves())
    if (leaf->isKernelArgument())
      leaves.push_back(leaf->displayName());
  EXPECT_EQ(leaves, (std::vector<std::string>{
                        "a_ptr", "b_ptr", "M", "stride_am[0]", "stride_am[1]",
                        "stride_ak[0]", "stride_ak[1][0]", "flag"}));

  // The positional form; a tuple of one keeps its comma; --aligned reaches
  // the elements and keeps `:1`.
  KernelSpec aligned = Parse("*fp16, *fp16, i32, (i32, i32:1), (i64,), i1, 64",
                             /*aligned=*/true);
  EXPECT_EQ(aligned.str(), "*fp16:16, *fp16:16, i32:16, (i32:16, i32:1), "
                           "(i64:16,), i1, 64");
  KernelSpec pointers =
      Parse("*fp16, *fp16, i32, (*fp32, i32), (i64,), i1, 64");
  assumeAlignedPointers(pointers);
  EXPECT_EQ(pointers.str(), "*fp16:16, *fp16:16, i32, (*fp32:16, i32), "
                            "(i64,), i1, 64");
}

TEST(Signature, ConstexprTuplesHoldValuesOnly) {
  KernelSpec spec = Parse("a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=i32, "
                          "stride_ak=i32, flag=i1, BLOCK=(64, (2, 'x'))");
  const ParamSpec &block = spec.params[6];
  ASSERT_TRUE(block.isTuple);
  EXPECT_FALSE(block.isKernelArgument());
  ASSERT_EQ(block.elements.size(), 2u);
  EXPECT_TRUE(block.elements[0].isConstexpr);
  EXPECT_EQ(block.elements[0].value.intValue, 64);
  EXPECT_EQ(block.elements[1].elements[1].value.text, "x");
  EXPECT_EQ(spec.str(), "*fp16, *fp16, i32, i32, i32, i1, (64, (2, \"x\"))");
  EXPECT_THAT(ErrorOf("a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=i32, "
                      "stride_ak=i32, flag=i1, BLOCK=(64, i32)"),
              HasSubstr("parameter 'BLOCK' is tl.constexpr: its tuple holds "
                        "compile-time values only (ints, floats, bools, "
                        "strings, dtypes), got a type for element BLOCK[1]"));
}

TEST(Signature, BadTuplesSayWhy) {
  auto error = [](const std::string &strides) {
    return ErrorOf("a_ptr=*fp16, b_ptr=*fp16, M=i32, stride_am=" + strides +
                   ", stride_ak=i32, flag=i1, BLOCK=64");
  };
  EXPECT_THAT(error("(i32, i33)"),
              HasSubstr("parameter 'stride_am[1]': 'i33' is not a type (*T "
                        "or T, optionally with :16, or :1 for integers), a "
                        "constexpr value (an int, float, bool, string, None "
                        "or tl dtype) or a nested tuple (did you mean "
                        "'i32'?)"));
  EXPECT_THAT(error("(i32, (i32, fp32:1))"),
              HasSubstr("parameter 'stride_am[1][1]': ':1' (the argument "
                        "equals 1) applies to integer types"));
  EXPECT_THAT(error("(i32, i32"),
              HasSubstr("parameter 'stride_am': '(i32, i32, stride_ak=i32, "
                        "flag=i1, BLOCK=64' is not a tuple (expected '(' "
                        "elements ')'"));
  EXPECT_THAT(error("()"),
              HasSubstr("parameter 'stride_am': an empty tuple has no "
                        "elements to pass"));
  EXPECT_THAT(error("(i32, , i32)"),
              HasSubstr("parameter 'stride_am': element 1 is empty"));
  EXPECT_THAT(error("(i32, tensordesc<fp16[16,16]>)"),
              HasSubstr("parameter 'stride_am[1]': a tensor descriptor "
                        "cannot be a tuple element"));
  EXPECT_THAT(error("((((((((((i32))))))))))"),
              HasSubstr("parameter 'stride_am[0][0][0][0][0][0][0][0]': "
                        "tuples nest at most 8 deep"));
  std::string wide = "(i32";
  for (int i = 0; i < 1024; ++i)
    wide += ", i32";
  EXPECT_THAT(error(wide + ")"),
              HasSubstr("parameter 'stride_am': a tuple has at most 1024 "
                        "elements, got 1025"));
  // A constexpr parameter takes values, not tuples of types.
  EXPECT_THAT(ErrorOf("*fp16, *fp16, i32, i32, i32, i1, (i32, i32)"),
              HasSubstr("parameter 'BLOCK' is tl.constexpr: its tuple holds "
                        "compile-time values only"));
}

} // namespace
} // namespace kiln::frontend
