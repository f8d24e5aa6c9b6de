//===- codegen_fuzzer.cpp - libFuzzer target over kiln-codegen's input ----===//
//
// Input: one or more variants' metadata JSON documents (what `kilnc compile
// --metadata` writes and kiln-codegen reads), separated by lines "----".
// Each is parsed (parseVariantMetadata); when all parse, the launchers are
// rendered from the real templates (codegen_templates/, found through
// KILN_TEMPLATES_DIR, set by the build), with a small fake cubin per
// variant. Findings: crashes, sanitizer reports, leaks, hangs, an error
// without a message, and generated code that names a parameter the metadata
// does not have. Rejected input is fine. scripts/fuzz.sh builds and runs it.
//
//===----------------------------------------------------------------------===//
#include "compiler/codegen/Codegen.h"
#include "compiler/codegen/VariantMetadata.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace kiln::codegen;

namespace {

const Templates &templates() {
  static std::optional<Templates> loaded;
  if (!loaded) {
    auto t = loadTemplates(KILN_TEMPLATES_DIR);
    if (!t) {
      llvm::errs() << "codegen_fuzzer: " << llvm::toString(t.takeError()) << "\n";
      std::abort();
    }
    loaded = std::move(*t);
  }
  return *loaded;
}

bool failedWithMessage(llvm::Error error) {
  std::string message = llvm::toString(std::move(error));
  if (message.empty()) {
    llvm::errs() << "codegen_fuzzer: an error without a message\n";
    __builtin_trap();
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<llvm::StringRef> documents;
  input.split(documents, "\n----\n", /*MaxSplit=*/7);
  std::vector<VariantInput> inputs;
  for (auto [i, json] : llvm::enumerate(documents)) {
    std::string origin = "variant" + std::to_string(i) + ".json";
    auto metadata = parseVariantMetadata(json, origin);
    if (!metadata) {
      failedWithMessage(metadata.takeError());
      return 0;
    }
    VariantInput in;
    in.origin = origin;
    in.metadataJson = json.str();
    in.cubin = std::string("\x7f" "ELF fake cubin ") + std::to_string(i);
    in.isPtx = (i % 2) == 1;
    if (in.isPtx)
      in.cubin = "// fake ptx\n";
    inputs.push_back(std::move(in));
  }
  CodegenOptions options{"fuzz_kernels", "kiln::fuzz", "fuzz/fuzz_kernels.h"};
  auto files = generateLaunchers(options, templates(), inputs);
  if (!files)
    failedWithMessage(files.takeError());
  return 0;
}
