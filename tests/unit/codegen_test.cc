#include "Codegen.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::codegen {
namespace {

using ::testing::AllOf;
using ::testing::ContainerEq;
using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The metadata of testdata/NAME.json with small fake cubin bytes.
VariantInput Input(const std::string &name) {
  VariantInput input;
  input.origin = name + ".json";
  input.metadataJson =
      ReadFile(std::string(KILN_TESTDATA_DIR) + "/" + name + ".json");
  input.cubin = "\x7f"
                "ELF fake cubin of " +
                name;
  return input;
}

std::vector<VariantInput> AddKernelInputs() {
  std::vector<VariantInput> inputs;
  for (const char *type : {"fp32", "fp16"})
    for (const char *arch : {"sm_80", "sm_90a"})
      for (const char *variant : {"general", "aligned"})
        inputs.push_back(Input(std::string("vector_add/add_") + type + "_" +
                               variant + "_" + arch));
  return inputs;
}

const Templates &RealTemplates() {
  static const Templates *templates = [] {
    llvm::Expected<Templates> loaded = loadTemplates(KILN_TEMPLATES_DIR);
    EXPECT_TRUE(static_cast<bool>(loaded))
        << llvm::toString(loaded.takeError());
    return new Templates(*loaded);
  }();
  return *templates;
}

CodegenOptions AddOptions() {
  return {"add", "kernels", "examples/vector_add/add.h"};
}

GeneratedFiles Generate(const std::vector<VariantInput> &inputs,
                        const CodegenOptions &options = AddOptions()) {
  llvm::Expected<GeneratedFiles> files =
      generateLaunchers(options, RealTemplates(), inputs);
  if (!files) {
    ADD_FAILURE() << llvm::toString(files.takeError());
    return {};
  }
  return *files;
}

std::string ErrorOf(const std::vector<VariantInput> &inputs,
                    const CodegenOptions &options = AddOptions()) {
  llvm::Expected<GeneratedFiles> files =
      generateLaunchers(options, RealTemplates(), inputs);
  if (files)
    return "no error";
  return llvm::toString(files.takeError());
}

std::string Replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::vector<std::string> IncludeLines(const std::string &text) {
  std::vector<std::string> includes;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#include", 0) == 0)
      includes.push_back(line);
  return includes;
}

TEST(Codegen, AddKernelHeaderDeclaresOneOverloadPerTypeTuple) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  EXPECT_THAT(
      files.header,
      HasSubstr("absl::Status launch_add_kernel(kiln::GridFor<add_"
                "kernel_config> grid,\n"
                "                               CUstream stream, float* "
                "x_ptr, float* y_ptr,\n"
                "                               float* out_ptr, int32_t "
                "n);\n"));
  EXPECT_THAT(files.header,
              HasSubstr("absl::Status launch_add_kernel(kiln::GridFor<add_"
                        "kernel_config> grid,\n"
                        "                               CUstream stream, "
                        "kiln::half* x_ptr,\n"
                        "                               kiln::half* y_ptr, "
                        "kiln::half* out_ptr,\n"
                        "                               int32_t n);\n"));
  // The same with a config first.
  EXPECT_THAT(
      files.header,
      HasSubstr("absl::Status launch_add_kernel(const "
                "add_kernel_config& config,\n"
                "                               "
                "kiln::GridFor<add_kernel_config> grid,\n"
                "                               CUstream stream, float* "
                "x_ptr, float* y_ptr,\n"));
  EXPECT_THAT(files.header,
              HasSubstr("const kiln::KernelInfo& add_kernel_info();"));
  EXPECT_THAT(files.header,
              HasSubstr("// add_kernel: variants (fp32 BLOCK=1024 num_warps=4),"
                        "\n// (fp16 BLOCK=2048 num_warps=8); archs sm_80, "
                        "sm_90a."));
  EXPECT_THAT(files.header, HasSubstr("namespace kernels {"));
  EXPECT_THAT(files.header, HasSubstr("#ifndef EXAMPLES_VECTOR_ADD_ADD_H_"));
}

TEST(Codegen, ConfigTypeDefaultsToTheFirstSpecialization) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  EXPECT_THAT(files.header, HasSubstr("struct add_kernel_config {\n"
                                      "  int64_t BLOCK = 1024;\n"
                                      "  int num_warps = 4;\n"
                                      "  int num_stages = 3;\n"
                                      "  int num_ctas = 1;\n"
                                      "};\n"));
  EXPECT_THAT(files.header,
              HasSubstr("The defaults\n// are those of the first "
                        "specialization: BLOCK=1024, num_warps=4, "
                        "num_stages=3."));
  // Each overload documents its own default and its compiled configs.
  EXPECT_THAT(files.header,
              AllOf(HasSubstr("these types' default config, BLOCK=2048, "
                              "num_warps=8, num_stages=3"),
                    HasSubstr("(BLOCK=2048, num_warps=8, num_stages=3); else "
                              "an InvalidArgument status.")));
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("constexpr add_kernel_config kConfig0 = {1024, "
                              "4, 3, 1};"),
                    HasSubstr("constexpr add_kernel_config kConfig1 = {2048, "
                              "8, 3, 1};")));
}

TEST(Codegen, HeaderIsSelfContained) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  EXPECT_THAT(IncludeLines(files.header),
              ContainerEq(std::vector<std::string>{
                  "#include <cstdint>", "#include \"absl/status/status.h\"",
                  "#include \"kiln/runtime.h\""}));
  // Nothing internal: no tables, no cubins.
  EXPECT_THAT(files.header, Not(HasSubstr("internal")));
  EXPECT_THAT(files.header, Not(HasSubstr("0x")));
  EXPECT_THAT(files.header, Not(HasSubstr("kConfig")));
}

TEST(Codegen, LauncherChecksAlignmentThenFallsBack) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  EXPECT_THAT(files.source,
              HasSubstr("#include \"examples/vector_add/add.h\""));
  EXPECT_THAT(
      files.source,
      HasSubstr("  void* args[] = {&x_ptr, &y_ptr, &out_ptr, &n};\n"
                "  if (kiln::internal::IsAligned16(x_ptr) &&\n"
                "      kiln::internal::IsAligned16(y_ptr) &&\n"
                "      kiln::internal::IsAligned16(out_ptr) && n % 16 "
                "== 0) {\n"
                "    return kiln::internal::LaunchVariant(\n"
                "        add_kernel_data::kInfo, "
                "add_kernel_data::kVariants[0],\n"
                "        grid.Resolve(add_kernel_data::kConfig0), "
                "stream, args);\n"
                "  }\n"
                "  return kiln::internal::LaunchVariant(\n"
                "      add_kernel_data::kInfo, "
                "add_kernel_data::kVariants[1],\n"
                "      grid.Resolve(add_kernel_data::kConfig0), stream, "
                "args);\n"
                "}\n"));
  // With a config: the config first, then the alignment.
  EXPECT_THAT(files.source,
              HasSubstr("  if (config.BLOCK == 2048 && config.num_warps == 8 "
                        "&& config.num_stages == 3 &&\n"
                        "      config.num_ctas == 1) {\n"
                        "    if (kiln::internal::IsAligned16(x_ptr) &&\n"));
  EXPECT_THAT(files.source,
              HasSubstr("  return kiln::internal::NoMatchingConfig("
                        "add_kernel_data::kInfo,\n"
                        "                                          \"*fp16, "
                        "*fp16, *fp16, i32\",\n"
                        "                                          \"(BLOCK="
                        "2048, num_warps=8, num_stages=3)\");\n"));
  EXPECT_THAT(files.source, HasSubstr("add_kernel_data::kVariants[2]"));
  EXPECT_THAT(files.source, HasSubstr("add_kernel_data::kVariants[3]"));
  EXPECT_THAT(files.source, Not(HasSubstr("NoMatchingVariant")));
  EXPECT_THAT(files.source,
              HasSubstr("const kiln::internal::KernelRegistration "
                        "kRegistration(kInfo);"));
}

TEST(Codegen, SourceHoldsTheTables) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  // Variant 0 is fp32 with every assumption, its images sorted by arch.
  EXPECT_THAT(files.source,
              HasSubstr("{/*name=*/\"x_ptr=*fp32:16, y_ptr=*fp32:16, "
                        "out_ptr=*fp32:16, n=i32:16, BLOCK=1024, num_warps=4, "
                        "num_stages=3\",\n"));
  EXPECT_THAT(files.source,
              HasSubstr("/*signature=*/\"*fp16, *fp16, *fp16, i32, 2048\""));
  EXPECT_THAT(files.source,
              HasSubstr("constexpr kiln::CubinImage kImages0[] = {\n"
                        "    {\"sm_80\", kCubin0Sm80, sizeof(kCubin0Sm80),\n"
                        "     /*registers=*/14, /*spills=*/0,\n"
                        "     /*shared_bytes=*/0, kiln::ImageFormat::kCubin},\n"
                        "    {\"sm_90a\", kCubin0Sm90a"));
  EXPECT_THAT(files.source,
              HasSubstr("constexpr kiln::KernelInfo kInfo = {\"add_kernel\", "
                        "kVariants,\n"
                        "                                    4, nullptr};"));
  EXPECT_THAT(files.source,
              HasSubstr("{\"n\", \"i32\", /*divisibility=*/16},"));
  // The fake cubin "\x7f" "ELF fake..." is embedded byte for byte.
  EXPECT_THAT(
      files.source,
      HasSubstr("alignas(16) constexpr unsigned char kCubin0Sm80[] = {\n"
                "    0x7f, 0x45, 0x4c, 0x46, 0x20, 0x66,"));
}

TEST(Codegen, OutputIsDeterministic) {
  std::vector<VariantInput> inputs = AddKernelInputs();
  const GeneratedFiles first = Generate(inputs);
  const GeneratedFiles second = Generate(inputs);
  EXPECT_EQ(first.header, second.header);
  EXPECT_EQ(first.source, second.source);
  // The order of archs on the command line does not matter either.
  std::stable_partition(inputs.begin(), inputs.end(),
                        [](const VariantInput &i) {
                          return i.origin.find("sm_90a") != std::string::npos;
                        });
  const GeneratedFiles reordered = Generate(inputs);
  EXPECT_EQ(first.header, reordered.header);
  EXPECT_EQ(first.source, reordered.source);
}

TEST(Codegen, OutputNamesNoInputPaths) {
  const GeneratedFiles files = Generate(AddKernelInputs());
  for (const std::string *text : {&files.header, &files.source}) {
    EXPECT_THAT(*text, Not(HasSubstr(KILN_TESTDATA_DIR)));
    EXPECT_THAT(*text, Not(HasSubstr(".json")));
    EXPECT_THAT(*text, Not(HasSubstr(".cubin")));
  }
}

// fp32 inputs compiled with BLOCK=`block` and `num_warps` instead.
std::vector<VariantInput> Fp32Config(const std::string &block, int num_warps) {
  std::vector<VariantInput> inputs;
  for (const char *name : {"vector_add/add_fp32_general_sm_80",
                           "vector_add/add_fp32_aligned_sm_80"}) {
    VariantInput input = Input(name);
    input.origin += "+" + block;
    size_t at = input.metadataJson.find("\"value\": \"1024\"");
    input.metadataJson.replace(at, 15, "\"value\": \"" + block + "\"");
    at = input.metadataJson.find("\"num_warps\": 4");
    input.metadataJson.replace(at, 14,
                               "\"num_warps\": " + std::to_string(num_warps));
    inputs.push_back(input);
  }
  return inputs;
}

TEST(Codegen, SameTypesWithOtherConstexprsAreConfigs) {
  std::vector<VariantInput> inputs = Fp32Config("1024", 4);
  for (const VariantInput &input : Fp32Config("512", 2))
    inputs.push_back(input);
  const GeneratedFiles files = Generate(inputs);
  // One pair of overloads; the default is the first config.
  EXPECT_THAT(files.header,
              AllOf(HasSubstr("these types' default config, BLOCK=1024, "
                              "num_warps=4"),
                    HasSubstr("(BLOCK=1024, num_warps=4, num_stages=3),\n"
                              "// (BLOCK=512, num_warps=2, num_stages=3)"),
                    HasSubstr("  int64_t BLOCK = 1024;")));
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("constexpr add_kernel_config kConfig1 = {512, "
                              "2, 3, 1};"),
                    HasSubstr("  if (config.BLOCK == 512 && config.num_warps "
                              "== 2 && config.num_stages == 3 &&\n"),
                    HasSubstr("\"(BLOCK=1024, num_warps=4, num_stages=3), "
                              "(BLOCK=512, num_warps=2, num_stages=3)\"")));
  // Each config keeps its aligned and general variants.
  EXPECT_THAT(files.source, HasSubstr("add_kernel_data::kVariants[3]"));
  EXPECT_THAT(files.source, Not(HasSubstr("kVariants[4]")));
}

TEST(Codegen, ConfigFieldsTakeTheConstexprsTypes) {
  std::vector<VariantInput> inputs;
  for (const char *value : {"True", "0.5", "tl.float16", "7"}) {
    VariantInput input = Input("codegen/copy_sm_80");
    input.origin = value;
    std::string &json = input.metadataJson;
    const std::string empty = "\"constexprs\": []";
    json.replace(json.find(empty), empty.size(),
                 std::string("\"constexprs\": [{\"name\": \"FLAG\", "
                             "\"value\": \"True\"}, {\"name\": \"RATE\", "
                             "\"value\": \"") +
                     (value[0] == '0' ? "0.5" : "2") +
                     "\"}, {\"name\": \"DTYPE\", \"value\": \"" +
                     (value[0] == 't' ? "tl.float16" : "tl.float32") +
                     "\"}, {\"name\": \"N\", \"value\": \"" +
                     (value[0] == '7' ? "7" : "8") + "\"}]");
    inputs.push_back(input);
  }
  const GeneratedFiles files = Generate(inputs, {"lib", "k", "some/dir/lib.h"});
  EXPECT_THAT(files.header, AllOf(HasSubstr("  bool FLAG = true;\n"),
                                  HasSubstr("  double RATE = 2.0;\n"),
                                  HasSubstr("  const char* DTYPE = "
                                            "\"tl.float32\";\n"),
                                  HasSubstr("  int64_t N = 8;\n")));
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("config.FLAG && config.RATE == 0.5 &&"),
                    HasSubstr("kiln::internal::SameText(config.DTYPE, "
                              "\"tl.float16\")"),
                    HasSubstr("config.N == 7")));
}

TEST(Codegen, PtxIsEmbeddedAfterTheCubins) {
  std::vector<VariantInput> inputs = {
      Input("vector_add/add_fp32_general_sm_80")};
  VariantInput ptx = inputs[0];
  ptx.origin = "ptx";
  ptx.cubin = std::string(".version 8.7\n.target sm_80\n") + '\0';
  ptx.isPtx = true;
  inputs.insert(inputs.begin(), ptx);
  const GeneratedFiles files = Generate(inputs);
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("    {\"sm_80\", kCubin0Sm80, sizeof(kCubin0Sm80),"),
            HasSubstr("     /*shared_bytes=*/0, kiln::ImageFormat::kCubin},\n"
                      "    {\"sm_80\", kPtx0Sm80, sizeof(kPtx0Sm80),"),
            HasSubstr("kiln::ImageFormat::kPtx}"), HasSubstr("bytes of PTX.")));
  // The header lists only cubin archs.
  EXPECT_THAT(files.header, HasSubstr("archs sm_80."));
  // Two different PTX texts for one arch are an error.
  VariantInput other = ptx;
  other.cubin = std::string(".version 8.7\n.target sm_80\n// other\n") + '\0';
  EXPECT_THAT(ErrorOf({ptx, other}), HasSubstr("given twice for sm_80 as PTX"));
}

// --embed incbin: the images are files that the shards' asm blocks read with
// .incbin; the source declares their symbols and holds no image bytes.
CodegenOptions IncbinOptions(unsigned shards) {
  CodegenOptions options = AddOptions();
  options.embed = CodegenOptions::Embed::Incbin;
  options.asmPrefix = "out/add.kiln/images_";
  options.asmShards = shards;
  return options;
}

std::vector<VariantInput> WithPaths(std::vector<VariantInput> inputs) {
  for (VariantInput &input : inputs)
    input.path =
        "bazel-out/bin/" + input.origin + (input.isPtx ? ".ptx" : ".cubin");
  return inputs;
}

size_t Count(const std::string &text, const std::string &needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1))
    ++n;
  return n;
}

TEST(Codegen, IncbinEmbedsEveryImageOnceThroughTheShards) {
  std::vector<VariantInput> inputs = WithPaths(AddKernelInputs());
  const GeneratedFiles files = Generate(inputs, IncbinOptions(3));
  EXPECT_THAT(files.source, Not(HasSubstr("0x7f,")));
  EXPECT_THAT(files.source, Not(HasSubstr("sizeof(k")));
  ASSERT_EQ(files.extraFiles.size(), 3u);
  std::string shards;
  for (unsigned k = 0; k < 3; ++k) {
    EXPECT_EQ(files.extraFiles[k].first,
              "out/add.kiln/images_" + std::to_string(k) + ".cc");
    // 8 images over 3 shards: none is empty.
    EXPECT_THAT(files.extraFiles[k].second, HasSubstr(".incbin"));
    EXPECT_THAT(files.extraFiles[k].second, HasSubstr("#error"));
    shards += files.extraFiles[k].second;
  }
  for (const VariantInput &input : inputs)
    EXPECT_EQ(Count(shards, "\".incbin \\\"" + input.path + "\\\"\\n\""), 1u)
        << input.path;
  // Every symbol is defined in a shard and declared (hidden) in the source.
  const std::string symbol = "_add_kernel_v0_sm_80";
  EXPECT_THAT(shards, HasSubstr(".hidden kiln_"));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("extern \"C\" __attribute__((visibility(\"hidden\"))) "
                      "const unsigned char\n    kiln_"),
            HasSubstr(symbol + "[];")));
  // Sizes are literal: the bytes are not visible to the C++ compiler.
  const std::string size = std::to_string(inputs[0].cubin.size());
  EXPECT_THAT(files.source, HasSubstr(symbol + ", " + size + ",\n"));
  // The same inputs give the same bytes.
  const GeneratedFiles again = Generate(inputs, IncbinOptions(3));
  EXPECT_EQ(again.source, files.source);
  EXPECT_EQ(again.extraFiles, files.extraFiles);
}

TEST(Codegen, IncbinPtxGetsItsNul) {
  std::vector<VariantInput> inputs = {
      Input("vector_add/add_fp32_general_sm_80")};
  VariantInput ptx = inputs[0];
  ptx.origin = "ptx";
  ptx.cubin = std::string(".version 8.7\n.target sm_80\n") + '\0';
  ptx.isPtx = true;
  inputs.push_back(ptx);
  const GeneratedFiles files = Generate(WithPaths(inputs), IncbinOptions(1));
  ASSERT_EQ(files.extraFiles.size(), 1u);
  const std::string &shard = files.extraFiles[0].second;
  EXPECT_THAT(shard, HasSubstr(".incbin \\\"bazel-out/bin/ptx.ptx\\\"\\n\"\n"
                               "    \".byte 0\\n\""));
  EXPECT_EQ(Count(shard, ".byte 0"), 1u);
  EXPECT_THAT(files.source, HasSubstr("_add_kernel_v0_sm_80_ptx, " +
                                      std::to_string(ptx.cubin.size())));
}

// CMake's Ninja compiles in the top build directory, kiln-codegen runs in
// the target's: --incbin-dir joins them; absolute paths stay as they are.
TEST(Codegen, IncbinDirPrefixesRelativePaths) {
  std::vector<VariantInput> inputs = WithPaths(AddKernelInputs());
  inputs[1].path = "/abs/a.cubin";
  CodegenOptions options = IncbinOptions(1);
  options.incbinDir = "tests/e2e";
  const GeneratedFiles files = Generate(inputs, options);
  ASSERT_EQ(files.extraFiles.size(), 1u);
  EXPECT_THAT(
      files.extraFiles[0].second,
      AllOf(HasSubstr(".incbin \\\"tests/e2e/" + inputs[0].path + "\\\""),
            HasSubstr(".incbin \\\"/abs/a.cubin\\\"")));
}

TEST(Codegen, IncbinRejectsPathsItCannotQuote) {
  std::vector<VariantInput> inputs = WithPaths(AddKernelInputs());
  inputs[1].path = "dir/with\"quote.cubin";
  EXPECT_THAT(ErrorOf(inputs, IncbinOptions(2)),
              AllOf(HasSubstr("with\"quote.cubin"), HasSubstr(".incbin")));
  EXPECT_THAT(ErrorOf(AddKernelInputs(),
                      [] {
                        CodegenOptions o = IncbinOptions(2);
                        o.asmPrefix.clear();
                        return o;
                      }()),
              HasSubstr("--asm-prefix"));
}

TEST(Codegen, CompressedImagesInflateToTheInputs) {
  if (!llvm::compression::zstd::isAvailable())
    GTEST_SKIP() << "LLVM built without zstd";
  std::vector<VariantInput> inputs = WithPaths(AddKernelInputs());
  CodegenOptions options = IncbinOptions(2);
  options.compressZstd = true;
  const GeneratedFiles files = Generate(inputs, options);
  ASSERT_EQ(files.extraFiles.size(), 4u); // 2 shards, 2 blobs
  EXPECT_EQ(files.extraFiles[2].first, "out/add.kiln/images_0.bin");
  EXPECT_THAT(
      files.source,
      HasSubstr("kiln::ImageCompression::kZstd, /*uncompressed_size=*/" +
                std::to_string(inputs[0].cubin.size()) + "}"));
  // The shards read the blobs, never the image files.
  EXPECT_THAT(files.extraFiles[0].second,
              AllOf(HasSubstr(".incbin \\\"out/add.kiln/images_0.bin\\\", 0, "),
                    Not(HasSubstr("bazel-out/bin/"))));
  // Each blob is a sequence of frames that inflate to some of the inputs.
  std::vector<std::string> inflated;
  for (unsigned k = 2; k < 4; ++k) {
    llvm::StringRef blob = files.extraFiles[k].second;
    // The frames' offsets and sizes, from the shard's directives.
    const std::string &shard = files.extraFiles[k - 2].second;
    for (size_t at = shard.find(".bin\\\", "); at != std::string::npos;
         at = shard.find(".bin\\\", ", at + 1)) {
      size_t offset = 0, size = 0;
      ASSERT_EQ(std::sscanf(shard.c_str() + at + 8, "%zu, %zu", &offset, &size),
                2);
      llvm::SmallVector<uint8_t, 0> out;
      llvm::Error err = llvm::compression::zstd::decompress(
          llvm::arrayRefFromStringRef(blob.substr(offset, size)), out, 4096);
      ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
      inflated.emplace_back(out.begin(), out.end());
    }
  }
  std::vector<std::string> expected;
  for (const VariantInput &input : inputs)
    expected.push_back(input.cubin);
  std::sort(expected.begin(), expected.end());
  std::sort(inflated.begin(), inflated.end());
  EXPECT_EQ(inflated, expected);
}

TEST(Codegen, SameVariantTwiceForAnArchIsAnError) {
  VariantInput again = Input("vector_add/add_fp32_general_sm_80");
  again.origin = "again.json";
  again.cubin += " rebuilt";
  EXPECT_THAT(ErrorOf({Input("vector_add/add_fp32_general_sm_80"), again}),
              AllOf(HasSubstr("again.json"), HasSubstr("given twice for sm_80"),
                    HasSubstr("vector_add/add_fp32_general_sm_80.json")));
}

// The build's unit-stride variant of a kernel without unit strides is the
// aligned variant again, byte for byte: kept once.
TEST(Codegen, AnIdenticalImageTwiceIsKeptOnce) {
  VariantInput again = Input("vector_add/add_fp32_aligned_sm_80");
  again.origin = "s0_unit_stride.json";
  const GeneratedFiles once =
      Generate({Input("vector_add/add_fp32_general_sm_80"),
                Input("vector_add/add_fp32_aligned_sm_80")});
  const GeneratedFiles twice =
      Generate({Input("vector_add/add_fp32_general_sm_80"),
                Input("vector_add/add_fp32_aligned_sm_80"), again});
  EXPECT_EQ(once.header, twice.header);
  // The same source, but for the count of inputs in its first lines.
  const std::string tables = "#include";
  EXPECT_EQ(once.source.substr(once.source.find(tables)),
            twice.source.substr(twice.source.find(tables)));
  EXPECT_THAT(twice.source,
              HasSubstr("kVariants,\n"
                        "                                    2, nullptr};"));
}

std::vector<VariantInput> StridedMatmulInputs() {
  return {Input("codegen/strided_matmul_general_sm_90a"),
          Input("codegen/strided_matmul_aligned_sm_90a"),
          Input("codegen/strided_matmul_unit_stride_sm_90a")};
}

// The unit-stride variant takes stride_ak, stride_bn and stride_cn equal to
// 1 and does not pass them: it is tried first, with its own argument array,
// then the aligned variant, then the general one.
TEST(Codegen, UnitStrideVariantIsTriedFirst) {
  const GeneratedFiles files =
      Generate(StridedMatmulInputs(), {"mm", "k", "mm.h"});
  EXPECT_THAT(
      files.source,
      HasSubstr(
          "                                   int32_t stride_cn) {\n"
          "  if (kiln::internal::IsAligned16(a_ptr) &&\n"
          "      kiln::internal::IsAligned16(b_ptr) &&\n"
          "      kiln::internal::IsAligned16(c_ptr) && M % 16 == 0 && N % 16 "
          "== 0 &&\n"
          "      K % 16 == 0 && stride_am % 16 == 0 && stride_ak == 1 &&\n"
          "      stride_bk % 16 == 0 && stride_bn == 1 && stride_cm % 16 == 0 "
          "&&\n"
          "      stride_cn == 1) {\n"
          "    void* args[] = {&a_ptr, &b_ptr, &c_ptr, &M, &N, &K, "
          "&stride_am, &stride_bk,\n"
          "                    &stride_cm};\n"
          "    return kiln::internal::LaunchVariant(\n"
          "        strided_matmul_data::kInfo, "
          "strided_matmul_data::kVariants[0],\n"));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("      stride_cn % 16 == 0) {\n"
                      "    void* args[] = {&a_ptr, &b_ptr, &c_ptr, &M, &N, "
                      "&K, &stride_am, &stride_ak,\n"
                      "                    &stride_bk, &stride_bn, "
                      "&stride_cm, &stride_cn};\n"),
            HasSubstr("  void* args[] = {&a_ptr, &b_ptr, &c_ptr, &M, &N, &K, "
                      "&stride_am, &stride_ak,\n"
                      "                  &stride_bk, &stride_bn, &stride_cm, "
                      "&stride_cn};\n"
                      "  return kiln::internal::LaunchVariant(\n"
                      "      strided_matmul_data::kInfo, "
                      "strided_matmul_data::kVariants[2],\n"),
            HasSubstr("{\"stride_ak\", \"i32\", /*divisibility=*/1, "
                      "/*equal_to_1=*/true},"),
            HasSubstr("{\"stride_am\", \"i32\", /*divisibility=*/16},"),
            HasSubstr("/*name=*/\"a_ptr=*fp16:16, b_ptr=*fp16:16, "
                      "c_ptr=*fp32:16, M=i32:16, N=i32:16, K=i32:16, "
                      "stride_am=i32:16, stride_ak=i32:1,")));
  // The header says which variant runs when.
  EXPECT_THAT(files.header,
              HasSubstr("Runs the first variant whose\n"
                        "// assumptions the arguments meet: (1) a_ptr, b_ptr "
                        "and c_ptr are 16-byte\n"
                        "// aligned, stride_ak, stride_bn and stride_cn equal "
                        "1 and M, N, K, stride_am,\n"
                        "// stride_bk and stride_cm are multiples of 16; (2) "
                        "a_ptr, b_ptr and c_ptr are\n"
                        "// 16-byte aligned and M, N, K, stride_am, "
                        "stride_ak, stride_bk, stride_bn,\n"
                        "// stride_cm and stride_cn are multiples of 16; else "
                        "the general one."));
}

// A `:1` parameter of every variant (the specialization's own) is checked
// before anything else, with an error naming it, and never passed.
TEST(Codegen, EqualToOneOfEveryVariantIsRequired) {
  const GeneratedFiles files =
      Generate({Input("codegen/row_copy_sm_80")}, {"rc", "k", "rc.h"});
  EXPECT_THAT(files.source,
              HasSubstr("                       uint64_t stride) {\n"
                        "  void* args[] = {&src, &dst, &n};\n"
                        "  if (stride != 1) {\n"
                        "    return kiln::internal::ArgumentNotOne("
                        "row_copy_data::kInfo,\n"
                        "                                          "
                        "\"stride\",\n"
                        "                                          "
                        "std::to_string(stride));\n"
                        "  }\n"
                        "  return kiln::internal::LaunchVariant(\n"));
  EXPECT_THAT(files.source, Not(HasSubstr("NoMatchingVariant")));
  EXPECT_THAT(files.header,
              HasSubstr("Requires stride to be 1\n"
                        "// (compiled for it, ':1'); another value gets an "
                        "InvalidArgument status."));
}

// A tuple parameter is one launcher argument: a std::array when its
// elements share a C++ type, else a std::tuple; the launcher reads each
// element with std::get, checks it as a scalar argument and passes it in the
// tuple's place.
TEST(Codegen, TupleParametersAreOneArgument) {
  const GeneratedFiles files =
      Generate({Input("codegen/tuple_strides_general_sm_80"),
                Input("codegen/tuple_strides_aligned_sm_80"),
                Input("codegen/mixed_tuple_sm_80")},
               {"tuples", "k", "tuples.h"});
  EXPECT_THAT(
      IncludeLines(files.header),
      ContainerEq(std::vector<std::string>{
          "#include <array>", "#include <cstdint>", "#include <tuple>",
          "#include \"absl/status/status.h\"", "#include \"kiln/runtime.h\""}));
  EXPECT_THAT(files.header,
              AllOf(HasSubstr("CUstream stream, float* x_ptr,\n"
                              "                                  "
                              "std::array<int32_t, 3> stride, int32_t n);"),
                    HasSubstr("kiln::half* y,\n"),
                    HasSubstr("std::tuple<float*, std::tuple<int64_t, "
                              "int32_t>> args_"),
                    HasSubstr("Requires stride[2] to be 1"),
                    // CUDA's __half for y; the tuple as it is.
                    HasSubstr("__half* y,"), HasSubstr("args_);")));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("if (std::get<2>(stride) != 1) {"),
            HasSubstr("\"stride[2]\""),
            HasSubstr("std::to_string(std::get<2>(stride))"),
            HasSubstr("kiln::internal::IsAligned16(x_ptr) && "
                      "std::get<0>(stride) % 16 == 0 &&\n"
                      "      std::get<1>(stride) % 16 == 0 && n % 16 == 0) {"),
            HasSubstr("void* args[] = {&x_ptr, &std::get<0>(stride), "
                      "&std::get<1>(stride), &n};"),
            HasSubstr("&std::get<0>(args_), &std::get<0>(std::get<1>(args_)),"),
            HasSubstr("&std::get<1>(std::get<1>(args_))"),
            // Introspection names the elements.
            HasSubstr("{\"stride[1]\", \"i32\", /*divisibility=*/16}"),
            // An uncompiled config's error shows the tuple.
            HasSubstr("\"*fp32, (i32, i32, i32), i32\""),
            HasSubstr("\"*fp16, (*fp32, (i64, i32))\"")));
}

// A tuple's constexpr elements keep their slots in the launcher's argument:
// an int one takes the C++ type of the tuple's run-time integers, a None one
// is a std::nullptr_t, a bool one a bool. The launcher checks them before
// choosing a variant and passes only the run-time elements; they are not
// config fields.
TEST(Codegen, TupleConstexprElementsKeepTheirSlots) {
  const GeneratedFiles files =
      Generate({Input("codegen/tuple_constexpr_general_sm_80"),
                Input("codegen/tuple_constexpr_aligned_sm_80")},
               {"tc", "k", "tc.h"});
  EXPECT_THAT(
      IncludeLines(files.header),
      ContainerEq(std::vector<std::string>{
          "#include <array>", "#include <cstddef>", "#include <cstdint>",
          "#include <tuple>", "#include \"absl/status/status.h\"",
          "#include \"kiln/runtime.h\""}));
  EXPECT_THAT(
      files.header,
      AllOf(HasSubstr("std::array<int32_t, 3> stride,\n"),
            HasSubstr("std::tuple<float*, std::nullptr_t, bool> opts);"),
            HasSubstr("struct tuple_constexpr_config {\n"
                      "  int64_t BLOCK = 64;\n"
                      "  int num_warps = 4;"),
            HasSubstr("stride[1] = 1 and opts[2] = True (compiled for those "
                      "constexpr tuple\n// elements); another value gets an "
                      "InvalidArgument status.")));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("  if (std::get<1>(stride) != 1) {\n"
                      "    return kiln::internal::ArgumentNotCompiledValue(\n"
                      "        tuple_constexpr_data::kInfo, \"stride[1]\",\n"
                      "        std::to_string(std::get<1>(stride)), \"1\");\n"
                      "  }\n"),
            HasSubstr("  if (!std::get<2>(opts)) {\n"
                      "    return kiln::internal::ArgumentNotCompiledValue(\n"
                      "        tuple_constexpr_data::kInfo, \"opts[2]\",\n"
                      "        std::string(std::get<2>(opts) ? \"True\" : "
                      "\"False\"), \"True\");\n"),
            // The entry point takes the run-time elements only.
            HasSubstr("void* args[] = {&x_ptr, &std::get<0>(stride), "
                      "&std::get<2>(stride),\n"
                      "                  &std::get<0>(opts)};"),
            HasSubstr("{\"stride[1]\", \"i32\", /*divisibility=*/1, "
                      "/*equal_to_1=*/false, /*value=*/\"1\"}"),
            HasSubstr("{\"opts[1]\", \"none\", /*divisibility=*/1, "
                      "/*equal_to_1=*/false, /*value=*/\"None\"}"),
            // Only BLOCK is a constexpr of the variants' tables.
            HasSubstr("constexpr kiln::ConstexprInfo kConstexprs0[] = {\n"
                      "    {\"BLOCK\", \"64\"},\n};"),
            // An uncompiled config's error shows the elements' values.
            HasSubstr("\"*fp32, (i32, 1, i32), (*fp32, None, True)\"")));
  EXPECT_THAT(files.source, Not(HasSubstr("std::get<1>(opts) !=")));

  // A value the run-time elements' type cannot hold makes the slot int64_t.
  VariantInput wide = Input("codegen/tuple_constexpr_general_sm_80");
  wide.metadataJson =
      Replaced(wide.metadataJson, R"("tuple_index": [1], "value": "1")",
               R"("tuple_index": [1], "value": "4294967296")");
  EXPECT_THAT(Generate({wide}, {"tc", "k", "tc.h"}).header,
              HasSubstr("std::tuple<int32_t, int64_t, int32_t> stride,"));
}

// Specializations that differ in a tuple element, constexpr in one and
// run-time in the other, share a launcher: it runs the first when the
// argument has the compiled value, as it does for `:1`.
TEST(Codegen, TupleConstexprElementsChooseVariants) {
  const GeneratedFiles files =
      Generate({Input("codegen/tuple_fast_path_any_sm_80"),
                Input("codegen/tuple_fast_path_one_sm_80")},
               {"fp", "k", "fp.h"});
  EXPECT_THAT(files.header,
              HasSubstr("absl::Status launch_tuple_fast_path(kiln::GridFor<"
                        "tuple_fast_path_config> grid,\n"
                        "                                    CUstream stream, "
                        "float* x_ptr,\n"
                        "                                    std::array<"
                        "int32_t, 2> stride);\n"));
  EXPECT_THAT(files.header,
              HasSubstr("variant compiled for such arguments when stride[1] "
                        "equals 1, else the general\n// one."));
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("  if (std::get<1>(stride) == 1) {\n"
                              "    void* args[] = {&x_ptr, "
                              "&std::get<0>(stride)};\n"
                              "    return kiln::internal::LaunchVariant(\n"
                              "        tuple_fast_path_data::kInfo, "
                              "tuple_fast_path_data::kVariants[0],"),
                    HasSubstr("  void* args[] = {&x_ptr, &std::get<0>(stride), "
                              "&std::get<1>(stride)};\n"
                              "  return kiln::internal::LaunchVariant(\n"
                              "      tuple_fast_path_data::kInfo, "
                              "tuple_fast_path_data::kVariants[1],"),
                    Not(HasSubstr("ArgumentNotCompiledValue"))));
}

// What a launcher could not check faithfully is refused, naming the
// element: a constexpr float element, and a tuple of constexprs only.
TEST(Codegen, TupleElementsALauncherCannotCheckAreRefused) {
  VariantInput input = Input("codegen/tuple_constexpr_general_sm_80");
  input.metadataJson =
      Replaced(input.metadataJson, R"("tuple_index": [1], "value": "1")",
               R"("tuple_index": [1], "value": "0.5")");
  EXPECT_THAT(ErrorOf({input}),
              HasSubstr("codegen/tuple_constexpr_general_sm_80.json: kernel "
                        "tuple_constexpr: tuple parameter 'stride' has the "
                        "constexpr element stride[1]=0.5; a launcher checks "
                        "int, bool and None elements against the argument, "
                        "not this one (give the element a type)"));
  input = Input("codegen/tuple_constexpr_general_sm_80");
  input.metadataJson = Replaced(
      input.metadataJson,
      R"({"name": "opts", "tuple_index": [0], "type": "*fp32", "divisibility": 1})",
      R"({"name": "n", "type": "i32", "divisibility": 1})");
  input.metadataJson =
      Replaced(input.metadataJson, R"({"name": "opts", "tuple_index": [1])",
               R"({"name": "opts", "tuple_index": [0], "value": "7"},
    {"name": "opts", "tuple_index": [1])");
  EXPECT_THAT(ErrorOf({input}),
              HasSubstr("kernel tuple_constexpr: tuple parameter 'opts' has "
                        "only constexpr elements (opts[0]=7, ...); a launcher "
                        "takes tuples with a run-time element"));
}

// A class's static method is named "Cls.method" (kilnc -n): the generated
// C++ names join the parts with '_', so two classes' methods of one name
// do not collide, and the dotted name is what KernelInfo, messages and
// comments show.
TEST(Codegen, StaticMethodsOfClassesGetTheirClassInTheirNames) {
  CodegenOptions options = {"acts", "k", "pkg/acts.h"};
  options.embed = CodegenOptions::Embed::Incbin;
  options.asmPrefix = "acts.kiln/images_";
  std::vector<VariantInput> inputs = {
      Input("codegen/class_gelu_forward_sm_80"),
      Input("codegen/class_relu_forward_sm_80")};
  for (VariantInput &input : inputs)
    input.path = "acts.kiln/sm_80/" + input.origin + ".cubin";
  const GeneratedFiles files = Generate(inputs, options);
  EXPECT_THAT(
      files.header,
      AllOf(HasSubstr("the Triton kernels GELU.forward and ReLU.forward"),
            HasSubstr("struct GELU_forward_config {"),
            HasSubstr("absl::Status launch_GELU_forward(kiln::GridFor<GELU_"
                      "forward_config> grid,"),
            HasSubstr("absl::Status launch_ReLU_forward(kiln::GridFor<ReLU_"
                      "forward_config> grid,"),
            HasSubstr("const kiln::KernelInfo& GELU_forward_info();"),
            HasSubstr("const kiln::KernelInfo& ReLU_forward_info();"),
            HasSubstr("// The static description of every variant and image "
                      "of GELU.forward, for"),
            HasSubstr("Launches GELU.forward(x_ptr *fp32, out_ptr *fp32, n "
                      "i32)"),
            Not(HasSubstr("launch_forward"))));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("namespace GELU_forward_data {"),
            HasSubstr("namespace ReLU_forward_data {"),
            HasSubstr("constexpr kiln::KernelInfo kInfo = {\"GELU.forward\", "
                      "kVariants,"),
            HasSubstr("/*entry=*/\"forward\","),
            HasSubstr("const kiln::KernelInfo& ReLU_forward_info() { return "
                      "ReLU_forward_data::kInfo; }")));
  // The image symbols are identifiers too.
  std::string shards;
  for (const auto &[path, text] : files.extraFiles)
    shards += text;
  EXPECT_THAT(shards, AllOf(HasSubstr("_GELU_forward_v0_sm_80:"),
                            HasSubstr("_ReLU_forward_v0_sm_80:"),
                            Not(HasSubstr("GELU.forward_"))));
}

// Two kernels whose names map to one C++ name are an error naming both.
TEST(Codegen, KernelsWithOneCppNameAreAnError) {
  VariantInput plain = Input("codegen/class_relu_forward_sm_80");
  plain.origin = "plain.json";
  plain.metadataJson =
      Replaced(plain.metadataJson, "\"ReLU.forward\"", "\"GELU_forward\"");
  EXPECT_THAT(
      ErrorOf({Input("codegen/class_gelu_forward_sm_80"), plain}),
      HasSubstr("plain.json: kernels GELU.forward (from "
                "codegen/class_gelu_forward_sm_80.json) and GELU_forward would "
                "both be named GELU_forward in C++ (launch_GELU_forward, "
                "GELU_forward_config, GELU_forward_info)"));
}

TEST(Codegen, EveryTypeMapsAndOnlyAlignedVariantsMayExist) {
  const GeneratedFiles files = Generate({Input("codegen/scale_aligned_sm_90a")},
                                        {"scale", "a::b", "scale.h"});
  EXPECT_THAT(files.header,
              HasSubstr("absl::Status launch_scale_kernel(kiln::GridFor<"
                        "scale_kernel_config> grid,\n"
                        "                                 CUstream stream, "
                        "kiln::bfloat16* x_ptr,\n"
                        "                                 kiln::float8_e4m3* "
                        "out_ptr, float alpha,\n"
                        "                                 bool flag, int64_t "
                        "count, int32_t new_);"));
  EXPECT_THAT(files.header, HasSubstr("namespace a::b {"));
  EXPECT_THAT(files.header,
              AllOf(HasSubstr("Requires that x_ptr and out_ptr are 16-byte "
                              "aligned and count\n// is a multiple of 16"),
                    HasSubstr("(bf16/fp8e4nv TILE=128 num_warps=2 "
                              "num_stages=4)")));
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("kiln::internal::IsAligned16(out_ptr) && count % "
                              "16 == 0) {"),
                    HasSubstr("return kiln::internal::NoMatchingVariant("),
                    HasSubstr("\"x_ptr and out_ptr are 16-byte aligned and "
                              "count is a multiple of 16\""),
                    HasSubstr("/*shared_bytes=*/65536"),
                    HasSubstr("/*num_stages=*/4")));
}

// A descriptor parameter: its C++ type is kiln::TensorDescriptor<T, Rank>,
// its block shape belongs to the config (two block shapes, one overload), and
// each config packs it into the ABI (tensor map, base, extents, strides)
// before choosing a variant, with what the metadata says of its tensor map.
TEST(Codegen, DescriptorParametersArePackedPerConfig) {
  const GeneratedFiles files =
      Generate({Input("codegen/tile_desc_bm64_sm_90a"),
                Input("codegen/tile_desc_bm128_sm_90a")},
               {"tile", "k", "tile.h"});
  EXPECT_THAT(files.header,
              HasSubstr("const kiln::TensorDescriptor<kiln::half, 2>& a_desc"));
  EXPECT_THAT(files.header,
              HasSubstr("Descriptor arguments must have the block shape"));
  EXPECT_THAT(files.header, HasSubstr("a_desc [64,64]"));
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("constexpr int32_t kDescriptor0_0_0Block[] = {64, 64};\n"
                      "constexpr int32_t kDescriptor0_0_0Box[] = {64, 64};\n"
                      "constexpr kiln::internal::TensorDescriptorParam "
                      "kDescriptor0_0_0 = {\n"
                      "    \"a_desc\", \"fp16\", /*rank=*/2, "
                      "kDescriptor0_0_0Block,\n"
                      "    /*box=*/kDescriptor0_0_0Box, "
                      "/*swizzle_bytes=*/128};"),
            HasSubstr("constexpr int32_t kDescriptor0_1_0Block[] = {128, "
                      "64};\n"
                      "constexpr kiln::internal::TensorDescriptorParam "
                      "kDescriptor0_1_0 = {\n"
                      "    \"a_desc\", \"fp16\", /*rank=*/2, "
                      "kDescriptor0_1_0Block,\n"
                      "    /*box=*/nullptr, /*swizzle_bytes=*/0};"),
            HasSubstr("  kiln::internal::TensorDescriptorArgs<2> a_desc_abi;\n"
                      "  if (absl::Status status = "
                      "kiln::internal::PackTensorDescriptor(\n"
                      "          tile_kernel_data::kInfo, "
                      "tile_kernel_data::kDescriptor0_0_0, a_desc.view(), "
                      "a_desc_abi);\n"
                      "      !status.ok()) {\n"
                      "    return status;\n"
                      "  }\n"),
            HasSubstr("kiln::internal::IsAligned16(out)"),
            HasSubstr("void* args[] = {&a_desc_abi.tensor_map, "
                      "&a_desc_abi.base,"),
            HasSubstr("&a_desc_abi.strides[1], &out, &n};"),
            HasSubstr("tile_kernel_data::kDescriptor0_1_0, a_desc.view()"),
            HasSubstr("{\"a_desc\", \"tensordesc<fp16[64,64]>\", "
                      "/*divisibility=*/1},")));
}

// A variant that assumes a descriptor's extents divisible by 16 (the aligned
// variant's `tensordesc<...>:16`) runs when the packed extents are.
TEST(Codegen, DescriptorExtentsDivisibleBy16AreChecked) {
  VariantInput aligned = Input("codegen/tile_desc_bm64_sm_90a");
  const std::string general =
      "\"type\": \"tensordesc<fp16[64,64]>\", \"divisibility\": 1";
  size_t at = aligned.metadataJson.find(general);
  ASSERT_NE(at, std::string::npos);
  aligned.metadataJson.replace(
      at, general.size(),
      "\"type\": \"tensordesc<fp16[64,64]>\", \"divisibility\": 16");
  const std::string signature = "tensordesc<fp16[64,64]>, ";
  at = aligned.metadataJson.find(signature);
  ASSERT_NE(at, std::string::npos);
  aligned.metadataJson.replace(at, signature.size(),
                               "tensordesc<fp16[64,64]>:16, ");
  const GeneratedFiles files =
      Generate({aligned, Input("codegen/tile_desc_bm64_sm_90a")},
               {"tile", "k", "tile.h"});
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("a_desc_abi.shape[0] % 16 == 0 && "
                              "a_desc_abi.shape[1] % 16 == 0"),
                    HasSubstr("the extents of a_desc are multiples of 16")));
}

TEST(Codegen, DescriptorBlockShapesOfOneConfigMustAgree) {
  VariantInput a = Input("codegen/tile_desc_bm64_sm_90a");
  VariantInput b = Input("codegen/tile_desc_bm128_sm_90a");
  // The same config as `a`, another block shape.
  const std::string bm128 = "\"value\": \"128\"";
  const std::string warps8 = "\"num_warps\": 8";
  b.metadataJson.replace(b.metadataJson.find(bm128), bm128.size(),
                         "\"value\": \"64\"");
  b.metadataJson.replace(b.metadataJson.find(warps8), warps8.size(),
                         "\"num_warps\": 4");
  EXPECT_THAT(ErrorOf({a, b}, {"tile", "k", "tile.h"}),
              HasSubstr("same config but different descriptor block shapes"));
}

// The same variant for an arch whose code reads the tensor map (sm_90a:
// TMA) and one whose code does not (sm_80): one variant, whose config
// encodes the map for both.
TEST(Codegen, ArchsWithoutTmaShareTheConfigsTensorMap) {
  VariantInput tma = Input("codegen/tile_desc_bm64_sm_90a");
  VariantInput plain = tma;
  plain.origin = "sm_80.json";
  const std::string map = ",\n     \"tensor_map\": {\"box\": [64, 64], "
                          "\"swizzle\": 128}";
  ASSERT_NE(plain.metadataJson.find(map), std::string::npos);
  plain.metadataJson.erase(plain.metadataJson.find(map), map.size());
  const std::string arch = "\"arch\": \"sm_90a\"";
  plain.metadataJson.replace(plain.metadataJson.find(arch), arch.size(),
                             "\"arch\": \"sm_80\"");
  for (const auto &inputs : {std::vector<VariantInput>{plain, tma},
                             std::vector<VariantInput>{tma, plain}}) {
    const GeneratedFiles files = Generate(inputs, {"tile", "k", "tile.h"});
    EXPECT_THAT(files.source,
                AllOf(HasSubstr("constexpr int32_t kDescriptor0_0_0Box[] = "
                                "{64, 64};"),
                      HasSubstr("/*swizzle_bytes=*/128};")));
    EXPECT_THAT(files.source, Not(HasSubstr("kDescriptor0_0_1")));
  }
}

// Two variants of one config that read a map encoded differently cannot
// share the one encoding a launch makes.
TEST(Codegen, TensorMapsOfOneConfigMustAgree) {
  VariantInput a = Input("codegen/tile_desc_bm64_sm_90a");
  VariantInput b = a;
  b.origin = "other.json";
  const std::string swizzle = "\"swizzle\": 128";
  b.metadataJson.replace(b.metadataJson.find(swizzle), swizzle.size(),
                         "\"swizzle\": 64");
  const std::string arch = "\"arch\": \"sm_90a\"";
  b.metadataJson.replace(b.metadataJson.find(arch), arch.size(),
                         "\"arch\": \"sm_90\"");
  EXPECT_THAT(ErrorOf({a, b}, {"tile", "k", "tile.h"}),
              AllOf(HasSubstr("tensor map of a_desc encoded differently"),
                    HasSubstr("box [64, 64], swizzle 128 vs box [64, 64], "
                              "swizzle 64")));
}

std::vector<VariantInput> DeviceDescInputs() {
  return {Input("codegen/device_desc_sm_80"),
          Input("codegen/device_desc_sm_90a")};
}

// An entry point that takes the global scratch pointer ("global_scratch_bytes"
// in the metadata, 0 for sm_80) gets a trailing null slot in its argument
// array, the slot's index in its VariantInfo and each image's bytes per
// program; an image that uses none keeps the short initializer.
TEST(Codegen, GlobalScratchTakesATrailingNullSlot) {
  const GeneratedFiles files =
      Generate(DeviceDescInputs(), {"dd", "k", "dd.h"});
  EXPECT_THAT(
      files.source,
      AllOf(
          HasSubstr("  void* args[] = {&a_ptr, &out_ptr, &M, &N, nullptr};\n"),
          HasSubstr("     /*cache=*/&variant_caches[0],\n"
                    "     /*global_scratch_arg=*/4},\n"),
          HasSubstr("     /*shared_bytes=*/0, kiln::ImageFormat::kCubin},\n"),
          HasSubstr("     /*shared_bytes=*/16384, kiln::ImageFormat::kCubin,\n"
                    "     kiln::ImageCompression::kNone, "
                    "/*uncompressed_size=*/0,\n"
                    "     /*global_scratch_bytes=*/256},\n")));
  // Kernels without the parameter are as before.
  const GeneratedFiles add = Generate(AddKernelInputs());
  EXPECT_THAT(add.source, Not(HasSubstr("global_scratch")));
  EXPECT_THAT(add.source, Not(HasSubstr("&n, nullptr")));
}

// A warp-specialized image ("producer_warps" in the metadata) records its
// producer warps after the scratch bytes, which it then spells out; the
// sm_80 image, without, keeps the short initializer.
TEST(Codegen, ProducerWarpsFollowTheScratchBytes) {
  std::vector<VariantInput> inputs = DeviceDescInputs();
  std::string &json = inputs[1].metadataJson;
  const std::string scratch = "\"global_scratch_bytes\": 256,";
  ASSERT_NE(json.find(scratch), std::string::npos);
  json.replace(json.find(scratch), scratch.size(),
               scratch + " \"producer_warps\": 4,");
  const GeneratedFiles files = Generate(inputs, {"dd", "k", "dd.h"});
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("     /*shared_bytes=*/0, kiln::ImageFormat::kCubin},\n"),
            HasSubstr("     /*global_scratch_bytes=*/256,\n"
                      "     /*producer_warps=*/4},\n")));
}

// An image kilnc compiled for fewer warps than the config's ("launch_warps")
// records them last, after the scratch bytes and producer warps it then
// spells out.
TEST(Codegen, LaunchWarpsFollowTheProducerWarps) {
  std::vector<VariantInput> inputs = DeviceDescInputs();
  std::string &json = inputs[1].metadataJson;
  const std::string scratch = "\"global_scratch_bytes\": 256,";
  ASSERT_NE(json.find(scratch), std::string::npos);
  json.replace(json.find(scratch), scratch.size(),
               scratch + " \"launch_warps\": 2,");
  const GeneratedFiles files = Generate(inputs, {"dd", "k", "dd.h"});
  EXPECT_THAT(
      files.source,
      AllOf(HasSubstr("     /*shared_bytes=*/0, kiln::ImageFormat::kCubin},\n"),
            HasSubstr("     /*global_scratch_bytes=*/256,\n"
                      "     /*producer_warps=*/0,\n"
                      "     /*launch_warps=*/2},\n")));
}

// With no other parameter, the array holds just the slot.
TEST(Codegen, GlobalScratchAloneIsTheWholeArgumentArray) {
  VariantInput input = Input("codegen/device_desc_sm_90a");
  std::string &json = input.metadataJson;
  const size_t params = json.find("\"params\"");
  json.replace(params, json.find("\"constexprs\"") - params,
               "\"params\": [],\n  ");
  const std::string signature = "*fp16:16, *fp16:16, i32, i32:16, 64, 64";
  json.replace(json.find(signature), signature.size(), "64, 64");
  const GeneratedFiles files = Generate({input}, {"dd", "k", "dd.h"});
  EXPECT_THAT(files.source, AllOf(HasSubstr("  void* args[] = {nullptr};\n"),
                                  HasSubstr("/*global_scratch_arg=*/0},")));
}

// A compressed image's fields come first, as CubinImage orders them.
TEST(Codegen, GlobalScratchFollowsTheCompressionFields) {
  if (!llvm::compression::zstd::isAvailable())
    GTEST_SKIP() << "LLVM built without zstd";
  std::vector<VariantInput> inputs = WithPaths(DeviceDescInputs());
  CodegenOptions options = IncbinOptions(1);
  options.compressZstd = true;
  const GeneratedFiles files = Generate(inputs, options);
  EXPECT_THAT(
      files.source,
      HasSubstr("kiln::ImageCompression::kZstd, /*uncompressed_size=*/" +
                std::to_string(inputs[1].cubin.size()) +
                ",\n     /*global_scratch_bytes=*/256},"));
}

// Variants of one config that differ in taking the parameter (a general
// variant whose code needs no scratch) each declare their own array.
TEST(Codegen, VariantsWithAndWithoutGlobalScratchHaveTheirOwnArrays) {
  VariantInput general = Input("codegen/device_desc_sm_90a");
  general.origin = "general.json";
  std::string &json = general.metadataJson;
  const std::string aligned = "\"divisibility\": 16";
  for (int i = 0; i < 3; ++i)
    json.replace(json.find(aligned), aligned.size(), "\"divisibility\": 1");
  const std::string signature = "*fp16:16, *fp16:16, i32, i32:16";
  json.replace(json.find(signature), signature.size(),
               "*fp16, *fp16, i32, i32");
  const std::string scratch = "\n  \"global_scratch_bytes\": 256,";
  json.erase(json.find(scratch), scratch.size());
  const GeneratedFiles files = Generate(
      {Input("codegen/device_desc_sm_90a"), general}, {"dd", "k", "dd.h"});
  EXPECT_THAT(files.source,
              AllOf(HasSubstr("    void* args[] = {&a_ptr, &out_ptr, &M, &N, "
                              "nullptr};\n"),
                    HasSubstr("  void* args[] = {&a_ptr, &out_ptr, &M, &N};\n"),
                    HasSubstr("/*global_scratch_arg=*/4}")));
}

// One launcher passes the same arguments whatever image the device loads:
// the images of a variant must agree on the parameter.
TEST(Codegen, ImagesOfAVariantMustAgreeOnGlobalScratch) {
  VariantInput sm80 = Input("codegen/device_desc_sm_80");
  const std::string scratch = "\n  \"global_scratch_bytes\": 0,";
  ASSERT_NE(sm80.metadataJson.find(scratch), std::string::npos);
  sm80.metadataJson.erase(sm80.metadataJson.find(scratch), scratch.size());
  for (const auto &inputs :
       {std::vector<VariantInput>{sm80, Input("codegen/device_desc_sm_90a")},
        std::vector<VariantInput>{Input("codegen/device_desc_sm_90a"), sm80}}) {
    EXPECT_THAT(ErrorOf(inputs, {"dd", "k", "dd.h"}),
                AllOf(HasSubstr("kernel device_desc_kernel, variant "
                                "[a_ptr=*fp16:16, out_ptr=*fp16:16"),
                      HasSubstr("\"global_scratch_bytes\""),
                      HasSubstr("codegen/device_desc_sm_80.json"),
                      HasSubstr("codegen/device_desc_sm_90a.json")));
  }
}

TEST(Codegen, SeveralKernelsInOneTarget) {
  const GeneratedFiles files = Generate(
      {Input("codegen/scale_aligned_sm_90a"), Input("codegen/copy_sm_80")},
      {"lib", "k", "some/dir/lib.h"});
  EXPECT_THAT(
      files.header,
      AllOf(HasSubstr("the Triton kernels scale_kernel and copy_kernel"),
            HasSubstr("const kiln::KernelInfo& scale_kernel_info();"),
            HasSubstr("const kiln::KernelInfo& copy_kernel_info();"),
            HasSubstr("uint8_t* dst,\n                                uint64_t "
                      "bytes);"),
            HasSubstr("num_ctas=2")));
  EXPECT_THAT(
      files.source,
      AllOf(
          HasSubstr("/*entry=*/\"copy_kernel_entry\""),
          HasSubstr("/*constexprs=*/nullptr, /*num_constexprs=*/0"),
          // Quotes, backslashes and '?' are escaped.
          HasSubstr("\"\\\"quoted\\\" \\\\ and \\077\\077 "
                    "trigraph-ish\""),
          HasSubstr("// some/dir/lib.cc: the cubins and launchers declared in\n"
                    "// some/dir/lib.h.\n")));
}

TEST(Codegen, RejectsBadOptions) {
  std::vector<VariantInput> inputs = {
      Input("vector_add/add_fp32_general_sm_80")};
  EXPECT_THAT(ErrorOf(inputs, {"add-on", "kernels", "add.h"}),
              HasSubstr("--name"));
  EXPECT_THAT(ErrorOf(inputs, {"add", "kernels::", "add.h"}),
              HasSubstr("--namespace"));
  EXPECT_THAT(ErrorOf(inputs, {"add", "kernels", "/abs/add.h"}),
              HasSubstr("--include-path"));
  EXPECT_THAT(ErrorOf({}), HasSubstr("no variants"));
  VariantInput empty = inputs[0];
  empty.cubin.clear();
  EXPECT_THAT(ErrorOf({empty}), HasSubstr("the cubin is empty"));
}

TEST(Codegen, ReadsCommandLinePairs) {
  const std::string json =
      std::string(KILN_TESTDATA_DIR) + "/codegen/copy_sm_80.json";
  llvm::Expected<VariantInput> input = readVariantInput(json + "=" + json);
  ASSERT_TRUE(static_cast<bool>(input)) << llvm::toString(input.takeError());
  EXPECT_EQ(input->origin, json);
  EXPECT_EQ(input->cubin, input->metadataJson);
  llvm::Expected<VariantInput> bad = readVariantInput(json);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_THAT(llvm::toString(bad.takeError()),
              HasSubstr("expected VARIANT.json=VARIANT.cubin"));
}

// --- tuning -------------------------------------------------------------

// tuned_saxpy's three configs (or another kernel's `configs`, in
// testdata/codegen/`name`), read as kilnc --autotune leaves them.
std::vector<VariantInput> TunedInputs(const std::string &name = "tuned_saxpy",
                                      int configs = 3) {
  std::string dir = std::string(KILN_TESTDATA_DIR) + "/codegen/" + name +
                    (name == "tuned_saxpy" ? "_sm_90a" : "_sm_80");
  // The cubins beside the metadata, as kilnc --autotune leaves them.
  // One directory per process: ctest runs the tests in parallel processes.
  std::string images = ::testing::TempDir() + "/" + name + "_images_" +
                       std::to_string(::getpid());
  llvm::sys::fs::create_directories(images);
  for (int k = 0; k < configs; ++k) {
    std::ofstream cubin(images + "/config" + std::to_string(k) + ".cubin",
                        std::ios::binary);
    cubin << "\x7f"
             "ELF fake cubin of config "
          << k;
  }
  llvm::Expected<std::vector<VariantInput>> inputs =
      readVariantInputs(dir + "=" + images);
  if (!inputs) {
    ADD_FAILURE() << llvm::toString(inputs.takeError());
    return {};
  }
  return *inputs;
}

std::string TableText() {
  return ReadFile(std::string(KILN_TESTDATA_DIR) +
                  "/codegen/tuned_saxpy_table.json");
}

CodegenOptions TunedOptions() {
  return {"tuned", "e2e::tuned", "tests/e2e/tuned.h"};
}

llvm::Expected<GeneratedFiles>
GenerateTuned(const std::vector<TuningTableInput> &tables) {
  return generateLaunchers(TunedOptions(), RealTemplates(), TunedInputs(),
                           tables);
}

std::string TunedError(const std::string &table) {
  llvm::Expected<GeneratedFiles> files =
      GenerateTuned({{"tuning/h100.json", table}});
  if (files)
    return "no error";
  return llvm::toString(files.takeError());
}

TEST(CodegenTuning, AutotuneDirectoryCarriesTheKey) {
  std::vector<VariantInput> inputs = TunedInputs();
  ASSERT_EQ(inputs.size(), 3u);
  ASSERT_TRUE(inputs[0].autotuneKey.has_value());
  EXPECT_EQ(*inputs[0].autotuneKey, std::vector<std::string>{"n"});
}

TEST(CodegenTuning, DefaultOverloadConsultsTheTable) {
  llvm::Expected<GeneratedFiles> files =
      GenerateTuned({{"tuning/h100.json", TableText()}});
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_THAT(
      files->source,
      AllOf(HasSubstr("  if (grid.depends_on_config()) {\n"
                      "    const int64_t tuning_key[] = "
                      "{static_cast<int64_t>(n)};\n"),
            HasSubstr("kiln::internal::TunedConfigPosition(\n"
                      "            tuned_saxpy_data::kInfo, 0, tuning_key, "
                      "stream,\n"),
            HasSubstr("return launch_tuned_saxpy(tuned_saxpy_data::kConfig2, "
                      "grid, stream,"),
            // Run-time tuning times the first config through `run` too
            // (without this case it was rejected, and large matmuls lost
            // their fastest config).
            HasSubstr("        case 0:\n"
                      "          return launch_tuned_saxpy(tuned_saxpy_data::"
                      "kConfig0,"),
            HasSubstr("constexpr const char* kTuningKey[] = {\"n\"};"),
            HasSubstr("constexpr int kTuningKeyParams[] = {4};"),
            HasSubstr("    \"BLOCK=256, num_warps=2, num_stages=3\",\n"),
            // Results sorted by key: 4096 before 1048576.
            HasSubstr("constexpr int64_t kTable0Keys[] = {4096, 1048576};"),
            HasSubstr("constexpr int kTable0Ranking[] = {1, 0, 2, 0};"),
            HasSubstr("{\"tuning/h100.json\", \"NVIDIA H100 80GB HBM3\",\n"
                      "     9, 0, /*sm_count=*/132"),
            HasSubstr("kiln::internal::TuningArgument<float*>(args[0])")));
  EXPECT_THAT(
      files->header,
      HasSubstr("std::vector<const kiln::KernelInfo*> tuned_kernels();"));
}

TEST(CodegenTuning, EmbeddedTableIsDeterministic) {
  // The same results written in another order and layout: the same bytes.
  std::string table = TableText();
  std::string reordered = R"json({"kiln_tuning_table": 1,
    "kernels": [{"results": [
      {"key": [4096], "types": "*fp32, *fp32, *fp32, fp32, i32",
       "ranking": [{"ms": 0.0021, "config": "BLOCK=256, num_warps=2, num_stages=3"},
                   {"ms": 0.0023, "config": "BLOCK=1024, num_warps=4, num_stages=3"}]},
      {"types": "*fp32, *fp32, *fp32, fp32, i32", "key": [1048576],
       "ranking": [{"config": "BLOCK=4096, num_warps=8, num_stages=2", "ms": 0.0042},
                   {"config": "BLOCK=1024, num_warps=4, num_stages=3", "ms": 0.0045}]}],
      "key": ["n"], "kernel": "tuned_saxpy"}],
    "kiln_version": "0.1.0",
    "device": {"driver_version": 13000, "sm_count": 132, "compute_capability": "9.0",
               "name": "NVIDIA H100 80GB HBM3"}})json";
  llvm::Expected<GeneratedFiles> a =
      GenerateTuned({{"tuning/h100.json", table}});
  llvm::Expected<GeneratedFiles> b =
      GenerateTuned({{"tuning/h100.json", reordered}});
  llvm::Expected<GeneratedFiles> again =
      GenerateTuned({{"tuning/h100.json", table}});
  ASSERT_TRUE(a && b && again);
  EXPECT_EQ(a->source, b->source);
  EXPECT_EQ(a->source, again->source);
  EXPECT_EQ(a->header, b->header);
  EXPECT_THAT(a->source, Not(HasSubstr(KILN_TESTDATA_DIR)));
}

TEST(CodegenTuning, WithoutTablesTheLaunchersStillTune) {
  llvm::Expected<GeneratedFiles> files = GenerateTuned({});
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_THAT(files->source, AllOf(HasSubstr("    nullptr, /*num_tables=*/0,"),
                                   HasSubstr("TunedConfigPosition(")));
}

TEST(CodegenTuning, MalformedTableNamesFileAndField) {
  EXPECT_THAT(
      TunedError(Replaced(TableText(), "\"ms\": 0.0045", "\"ms\": \"slow\"")),
      HasSubstr("tuning/h100.json:10: kernels[0].results[0]."
                "ranking[1].ms: expected a positive number, got a "
                "string"));
  EXPECT_THAT(TunedError("{\"kiln_tuning_table\": 1,"),
              HasSubstr("tuning/h100.json:1:25: malformed JSON"));
  EXPECT_THAT(TunedError(Replaced(TableText(), "\"sm_count\": 132, ", "")),
              HasSubstr("tuning/h100.json:3: device.sm_count: missing"));
}

TEST(CodegenTuning, TableMustFitTheKernels) {
  EXPECT_THAT(
      TunedError(Replaced(TableText(), "BLOCK=256, num_warps=2",
                          "BLOCK=512, num_warps=2")),
      AllOf(HasSubstr("tuning/h100.json: kernels[0].results[1].ranking[0]."
                      "config: 'BLOCK=512, num_warps=2, num_stages=3' is not "
                      "a compiled config of tuned_saxpy for these types; "
                      "compiled: 'BLOCK=1024, num_warps=4, num_stages=3', "
                      "'BLOCK=256, num_warps=2, num_stages=3', 'BLOCK=4096, "
                      "num_warps=8, num_stages=2'")));
  EXPECT_THAT(TunedError(Replaced(TableText(), "\"kernel\": \"tuned_saxpy\"",
                                  "\"kernel\": \"saxpy\"")),
              HasSubstr("kernels[0].kernel: 'saxpy' is not a kernel of this "
                        "target (it has tuned_saxpy)"));
  EXPECT_THAT(
      TunedError(Replaced(TableText(), "\"key\": [\"n\"]", "\"key\": [\"m\"]")),
      HasSubstr("kernels[0].key: [m] is not the kernel's key; its "
                "launchers pass [n]"));
  EXPECT_THAT(
      TunedError(Replaced(TableText(), "\"types\": \"*fp32, *fp32",
                          "\"types\": \"*fp16, *fp32")),
      HasSubstr("kernels[0].results[0].types: no overload of tuned_saxpy "
                "takes (*fp16, *fp32, *fp32, fp32, i32)"));
  // A kernel built without autotune takes no table.
  llvm::Expected<GeneratedFiles> plain = generateLaunchers(
      AddOptions(), RealTemplates(), AddKernelInputs(),
      {{"t.json", Replaced(TableText(), "tuned_saxpy", "add_kernel")}});
  ASSERT_FALSE(static_cast<bool>(plain));
  EXPECT_THAT(llvm::toString(plain.takeError()),
              HasSubstr("t.json: kernels[0].kernel: 'add_kernel' was not "
                        "built with autotune"));
}

// An autotuned kernel takes tuple parameters: the tuned launch passes the
// tuple on, and kiln-tune's type-erased launcher rebuilds it from the
// elements, one argument each, as ParamInfo lists them.
TEST(CodegenTuning, TupleParametersOfAutotunedKernels) {
  llvm::Expected<GeneratedFiles> files = generateLaunchers(
      {"tt", "k", "tt.h"}, RealTemplates(), TunedInputs("tuned_tuple", 2));
  ASSERT_TRUE(static_cast<bool>(files)) << llvm::toString(files.takeError());
  EXPECT_THAT(
      files->source,
      AllOf(
          HasSubstr("const int64_t tuning_key[] = {static_cast<int64_t>(n)};"),
          HasSubstr("return launch_tuned_tuple(tuned_tuple_data::kConfig1, "
                    "grid, stream,\n"
                    "                                    x_ptr, out_ptr, "
                    "stride, n);"),
          HasSubstr("constexpr int kTuningKeyParams[] = {4};"),
          // kiln-tune's launcher packs the tuple from its elements.
          HasSubstr("  const std::array<int32_t, 2> stride{kiln::internal::"
                    "TuningArgument<int32_t>(args[2]),\n"
                    "                                      kiln::internal::"
                    "TuningArgument<int32_t>(args[3])};\n"
                    "  switch (position) {\n"),
          HasSubstr("kiln::internal::TuningArgument<float*>(args[1]),\n"
                    "                                stride,\n"
                    "                                kiln::internal::"
                    "TuningArgument<int32_t>(args[4]));")));
}

TEST(CodegenTuning, TunerMainCallsKilnTune) {
  EXPECT_EQ(generateTunerMain(TunedOptions()),
            "// The tuner of tests/e2e/tuned.h: kiln-tune over the target's "
            "kernels.\n"
            "// Generated by kiln-codegen; do not edit.\n"
            "\n"
            "#include \"tests/e2e/tuned.h\"\n"
            "#include \"kiln/tune/tune_main.h\"\n"
            "\n"
            "int main(int argc, char** argv) {\n"
            "  return kiln::tune::TuneMain(e2e::tuned::tuned_kernels(), argc, "
            "argv);\n"
            "}\n");
}

} // namespace
} // namespace kiln::codegen
