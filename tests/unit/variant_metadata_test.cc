#include "VariantMetadata.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "TritonTypes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::codegen {
namespace {

using ::testing::HasSubstr;

const char kMetadata[] = R"json({
  "kernel": "add_kernel",
  "entry": "add_kernel",
  "arch": "sm_90a",
  "signature": "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024",
  "num_warps": 4, "num_stages": 3, "num_ctas": 1,
  "shared_bytes": 0,
  "registers": 16, "spills": 0,
  "params": [
    {"name": "x_ptr", "type": "*fp32", "divisibility": 16},
    {"name": "n", "type": "i32", "divisibility": 16}
  ],
  "constexprs": [{"name": "BLOCK", "value": "1024"}],
  "source_hash": "0123456789abcdef",
  "compiler": "kilnc 0.1.0 (LLVM 22)"
})json";

std::string ErrorOf(const std::string &json) {
  llvm::Expected<VariantMetadata> m = parseVariantMetadata(json, "v.json");
  if (m)
    return "no error";
  return llvm::toString(m.takeError());
}

std::string Replace(std::string text, const std::string &from,
                    const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(VariantMetadata, ParsesTheContractExample) {
  llvm::Expected<VariantMetadata> m = parseVariantMetadata(kMetadata, "v.json");
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->kernel, "add_kernel");
  EXPECT_EQ(m->arch, "sm_90a");
  EXPECT_EQ(m->numWarps, 4);
  EXPECT_EQ(m->registers, 16);
  ASSERT_EQ(m->params.size(), 2u);
  EXPECT_EQ(m->params[0].name, "x_ptr");
  EXPECT_EQ(m->params[0].type, "*fp32");
  EXPECT_EQ(m->params[1].divisibility, 16);
  ASSERT_EQ(m->constexprs.size(), 1u);
  EXPECT_EQ(m->constexprs[0].value, "1024");
  EXPECT_EQ(m->compiler, "kilnc 0.1.0 (LLVM 22)");
}

TEST(VariantMetadata, Errors) {
  EXPECT_THAT(ErrorOf("{"), HasSubstr("v.json: invalid JSON"));
  EXPECT_THAT(ErrorOf("[]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("arch": "sm_90a",)", "")),
              HasSubstr("missing key \"arch\""));
  EXPECT_THAT(
      ErrorOf(Replace(kMetadata, R"("num_warps": 4)", R"("num_warps": "4")")),
      HasSubstr("\"num_warps\" must be an integer"));
  EXPECT_THAT(
      ErrorOf(Replace(kMetadata, R"("num_warps": 4)", R"("num_warps": 3)")),
      HasSubstr("power of 2"));
  EXPECT_THAT(
      ErrorOf(Replace(kMetadata, R"("type": "*fp32")", R"("type": "*f32")")),
      HasSubstr("params[0] (x_ptr): unknown type \"*f32\""));
  EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("name": "n")", R"("name": "2n")")),
              HasSubstr("not an identifier"));
  EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("divisibility": 16}
  ])",
                              R"("divisibility": 8}
  ])")),
              HasSubstr("divisibility must be 1 or 16"));
  EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("arch": "sm_90a")",
                              R"("arch": "../../etc")")),
              HasSubstr("\"arch\" must look like sm_90a"));
}

// A class's static method answers to "Cls.method" (kilnc -n), nested
// classes to "Outer.Inner.method"; each part is an identifier.
TEST(VariantMetadata, KernelNamesMayBeQualified) {
  for (const char *name : {"GELU.forward", "Outer.Inner.k", "_k"}) {
    llvm::Expected<VariantMetadata> m = parseVariantMetadata(
        Replace(kMetadata, R"("kernel": "add_kernel")",
                std::string("\"kernel\": \"") + name + "\""),
        "v.json");
    ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
    EXPECT_EQ(m->kernel, name);
  }
  for (const char *name : {"GELU..forward", ".forward", "GELU.", "a.2b", ""})
    EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("kernel": "add_kernel")",
                                std::string("\"kernel\": \"") + name + "\"")),
                HasSubstr("\"kernel\" must be identifiers joined by '.'"))
        << name;
}

TEST(VariantMetadata, EqualToOneParameters) {
  const std::string unit =
      Replace(kMetadata, R"({"name": "n", "type": "i32", "divisibility": 16})",
              R"({"name": "n", "type": "i32", "divisibility": 1, )"
              R"("equal_to_1": true})");
  llvm::Expected<VariantMetadata> m = parseVariantMetadata(unit, "v.json");
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  EXPECT_FALSE(m->params[0].equalToOne);
  EXPECT_TRUE(m->params[1].equalToOne);
  EXPECT_THAT(
      ErrorOf(Replace(unit, "\"equal_to_1\": true", "\"equal_to_1\": 1")),
      HasSubstr("params[1]: \"equal_to_1\" must be true or false"));
  EXPECT_THAT(
      ErrorOf(Replace(unit, "\"divisibility\": 1,", "\"divisibility\": 16,")),
      HasSubstr("params[1] (n): equal to 1 and divisible by 16"));
  EXPECT_THAT(ErrorOf(Replace(kMetadata, R"("divisibility": 16},)",
                              R"("divisibility": 1, "equal_to_1": true},)")),
              HasSubstr("params[0] (x_ptr): only integers (not *fp32) can be "
                        "equal to 1"));
}

// Tuple parameters: each run-time element is a parameter with its
// "tuple_index"; the elements of one tuple are consecutive, in order, and
// make up whole tuples.
TEST(VariantMetadata, TupleElements) {
  auto withParams = [](const std::string &params,
                       const std::string &constexprs =
                           R"({"name": "BLOCK", "value": "1024"})") {
    std::string text =
        Replace(kMetadata,
                R"({"name": "x_ptr", "type": "*fp32", "divisibility": 16},
    {"name": "n", "type": "i32", "divisibility": 16})",
                params);
    return Replace(text, R"({"name": "BLOCK", "value": "1024"})", constexprs);
  };
  auto element = [](const std::string &index, const std::string &name = "s") {
    return R"({"name": ")" + name + R"(", "tuple_index": )" + index +
           R"(, "type": "i32", "divisibility": 1})";
  };
  llvm::Expected<VariantMetadata> m = parseVariantMetadata(
      withParams(element("[0]") + ", " + element("[1, 0]") + ", " +
                 element("[1, 1]")),
      "v.json");
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  ASSERT_EQ(m->params.size(), 3u);
  EXPECT_EQ(m->params[2].tupleIndex, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m->params[2].displayName(), "s[1][1]");
  // A constexpr element fills its place.
  m = parseVariantMetadata(
      withParams(element("[0]") + ", " + element("[2]"),
                 R"({"name": "s", "tuple_index": [1], "value": "8"})"),
      "v.json");
  ASSERT_TRUE(static_cast<bool>(m)) << llvm::toString(m.takeError());
  EXPECT_EQ(m->constexprs[0].displayName(), "s[1]");

  EXPECT_THAT(ErrorOf(withParams(element("[0]") + ", " + element("[2]"))),
              HasSubstr("v.json: tuple s lacks element s[1]"));
  EXPECT_THAT(ErrorOf(withParams(element("[1]") + ", " + element("[0]"))),
              HasSubstr("the elements of tuple parameter 's' are not in order "
                        "in \"params\" (s[0] comes after s[1])"));
  EXPECT_THAT(ErrorOf(withParams(element("[0]") + ", " + element("[0]", "t") +
                                 ", " + element("[1]"))),
              HasSubstr("the elements of tuple parameter 's' are not "
                        "consecutive"));
  EXPECT_THAT(ErrorOf(withParams(element("[0]") + ", " + element("[0, 0]"))),
              HasSubstr("tuple element s[0] is both an element and a tuple"));
  EXPECT_THAT(ErrorOf(withParams(element("[0]") + ", " +
                                 R"({"name": "s", "type": "i32", )"
                                 R"("divisibility": 1})")),
              HasSubstr("'s' is both a tuple and a parameter of its own"));
  EXPECT_THAT(ErrorOf(withParams(element("[]"))),
              HasSubstr("params[0]: \"tuple_index\" must be a non-empty "
                        "array"));
  EXPECT_THAT(ErrorOf(withParams(element("[-1]"))),
              HasSubstr("\"tuple_index\" must hold integers from 0 to 1023"));
}

// Optional: present (0 included) when the entry point takes the hidden
// global scratch pointer.
TEST(VariantMetadata, GlobalScratchBytes) {
  llvm::Expected<VariantMetadata> without =
      parseVariantMetadata(kMetadata, "v.json");
  ASSERT_TRUE(static_cast<bool>(without))
      << llvm::toString(without.takeError());
  EXPECT_FALSE(without->globalScratchBytes.has_value());
  for (int64_t bytes : {0, 128}) {
    llvm::Expected<VariantMetadata> with = parseVariantMetadata(
        Replace(kMetadata, R"("spills": 0,)",
                R"("spills": 0, "global_scratch_bytes": )" +
                    std::to_string(bytes) + ","),
        "v.json");
    ASSERT_TRUE(static_cast<bool>(with)) << llvm::toString(with.takeError());
    EXPECT_EQ(with->globalScratchBytes, std::optional<int64_t>(bytes));
  }
  auto withValue = [](const std::string &value) {
    return Replace(kMetadata, R"("spills": 0,)",
                   R"("spills": 0, "global_scratch_bytes": )" + value + ",");
  };
  EXPECT_THAT(ErrorOf(withValue("-128")),
              HasSubstr("v.json: \"global_scratch_bytes\" is -128, outside "
                        "[0, 2147483647]"));
  EXPECT_THAT(ErrorOf(withValue("4294967296")),
              HasSubstr("\"global_scratch_bytes\" is 4294967296, outside"));
  EXPECT_THAT(ErrorOf(withValue("\"128\"")),
              HasSubstr("v.json: \"global_scratch_bytes\" must be an integer"));
  EXPECT_THAT(ErrorOf(withValue("1.5")),
              HasSubstr("\"global_scratch_bytes\" must be an integer"));
  EXPECT_THAT(ErrorOf(withValue("null")),
              HasSubstr("\"global_scratch_bytes\" must be an integer"));
}

// Optional, 0 when absent: the warps a warp-specialized image runs past
// num_warps.
TEST(VariantMetadata, ProducerWarps) {
  llvm::Expected<VariantMetadata> without =
      parseVariantMetadata(kMetadata, "v.json");
  ASSERT_TRUE(static_cast<bool>(without))
      << llvm::toString(without.takeError());
  EXPECT_EQ(without->producerWarps, 0);
  auto withValue = [](const std::string &value) {
    return Replace(kMetadata, R"("spills": 0,)",
                   R"("spills": 0, "producer_warps": )" + value + ",");
  };
  llvm::Expected<VariantMetadata> with =
      parseVariantMetadata(withValue("4"), "v.json");
  ASSERT_TRUE(static_cast<bool>(with)) << llvm::toString(with.takeError());
  EXPECT_EQ(with->producerWarps, 4);
  EXPECT_THAT(ErrorOf(withValue("-4")),
              HasSubstr("v.json: \"producer_warps\" is -4, outside [0, 32]"));
}

// Optional, 0 when absent: the warps kilnc compiled the image for where it
// chose fewer than num_warps (wgmma); a power of 2 up to num_warps.
TEST(VariantMetadata, LaunchWarps) {
  llvm::Expected<VariantMetadata> without =
      parseVariantMetadata(kMetadata, "v.json");
  ASSERT_TRUE(static_cast<bool>(without))
      << llvm::toString(without.takeError());
  EXPECT_EQ(without->launchWarps, 0);
  auto withValue = [](const std::string &value) {
    return Replace(kMetadata, R"("spills": 0,)",
                   R"("spills": 0, "launch_warps": )" + value + ",");
  };
  llvm::Expected<VariantMetadata> with =
      parseVariantMetadata(withValue("2"), "v.json");
  ASSERT_TRUE(static_cast<bool>(with)) << llvm::toString(with.takeError());
  EXPECT_EQ(with->launchWarps, 2);
  EXPECT_THAT(ErrorOf(withValue("8")),
              HasSubstr("v.json: \"launch_warps\" must be a power of 2 up to "
                        "\"num_warps\" (4), got 8"));
  EXPECT_THAT(ErrorOf(withValue("3")),
              HasSubstr("\"launch_warps\" must be a power of 2"));
  EXPECT_THAT(ErrorOf(withValue("0")),
              HasSubstr("\"launch_warps\" is 0, outside [1, 32]"));
}

TEST(TritonTypes, MapsToTheDocumentedCppTypes) {
  const std::pair<const char *, const char *> cases[] = {
      {"*fp32", "float*"},
      {"*fp64", "double*"},
      {"*fp16", "kiln::half*"},
      {"*bf16", "kiln::bfloat16*"},
      {"*fp8e4nv", "kiln::float8_e4m3*"},
      {"*fp8e5", "kiln::float8_e5m2*"},
      {"*i8", "int8_t*"},
      {"*i64", "int64_t*"},
      {"*u16", "uint16_t*"},
      {"*i1", "bool*"},
      {"i32", "int32_t"},
      {"u64", "uint64_t"},
      {"i1", "bool"},
      {"fp32", "float"},
      {"fp16", "kiln::half"},
  };
  for (const auto &[triton, cpp] : cases) {
    EXPECT_EQ(cppTypeFor(triton).value_or("none"), cpp) << triton;
  }
  EXPECT_FALSE(cppTypeFor("f32").has_value());
  EXPECT_FALSE(cppTypeFor("**fp32").has_value());
  EXPECT_TRUE(isIntegerType("u8"));
  EXPECT_FALSE(isIntegerType("i1"));
  EXPECT_FALSE(isIntegerType("fp32"));
  EXPECT_TRUE(isPointerType("*i1"));
}

} // namespace
} // namespace kiln::codegen

// kiln-codegen splits a metadata signature as the front end does: a quoted
// string value is one entry, its commas included (the front end's
// Signature.QuotedStringsHoldCommas; both call compiler/signature).
TEST(TritonTypes, SignatureEntriesKeepQuotedCommas) {
  std::vector<llvm::StringRef> entries = kiln::codegen::splitSignatureEntries(
      "*fp16:16, i32, \"a, b\", 'c,d', tensordesc<fp16, [16, 16]>");
  EXPECT_THAT(entries,
              ::testing::ElementsAre("*fp16:16", "i32", "\"a, b\"", "'c,d'",
                                     "tensordesc<fp16, [16, 16]>"));
}
