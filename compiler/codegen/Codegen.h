//===- Codegen.h - Render the launchers of a triton_kernel target ---------===//
//
// The library behind the kiln-codegen tool (docs/architecture.md section 3):
// reads the variants' metadata and cubins, groups them (LauncherModel.h) and
// renders codegen_templates/kernel.{h,cc}.tmpl into the generated header and
// source. The output depends only on the options and the inputs' contents and
// order (kernels and overloads appear in the order of their first input; the
// order of archs does not matter): no timestamps, no file paths other than the
// include path.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_CODEGEN_H
#define KILN_CODEGEN_CODEGEN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen {

/// What kiln-codegen's flags say about the outputs.
struct CodegenOptions {
  /// --name: the triton_kernel target's name (NAME.h).
  std::string name;
  /// --namespace: the C++ namespace of the launchers; may be nested (a::b).
  std::string cppNamespace;
  /// --include-path: how users include the header, e.g.
  /// "examples/vector_add/add.h"; the source includes it this way too.
  std::string includePath;
};

/// The text of the two templates.
struct Templates {
  std::string header; // kernel.h.tmpl
  std::string source; // kernel.cc.tmpl
};

/// One input pair, read: the metadata JSON text and the cubin bytes.
struct VariantInput {
  /// The metadata's file name, for error messages.
  std::string origin;
  std::string metadataJson;
  /// The cubin bytes, or the PTX text (NUL-terminated) when `isPtx`.
  std::string cubin;
  bool isPtx = false;
  /// The @triton.autotune key, read from the directory of an autotuned
  /// variant (autotune_key.txt, written by `kilnc compile --autotune`).
  std::optional<std::vector<std::string>> autotuneKey;
};

/// One tuning table (kiln/tuning_table.h), read.
struct TuningTableInput {
  /// How errors and the generated code name the file: the path as the
  /// rule gives it, relative to the workspace or source directory.
  std::string origin;
  std::string json;
};

/// The generated files' contents.
struct GeneratedFiles {
  std::string header;
  std::string source;
};

/// Reads kernel.h.tmpl and kernel.cc.tmpl from `directory`.
llvm::Expected<Templates> loadTemplates(llvm::StringRef directory);

/// Reads one "VARIANT.json=VARIANT.cubin" command-line argument (split at the
/// first '='), or "VARIANT.json=VARIANT.ptx": that variant's PTX, embedded
/// for the driver to JIT on devices no cubin fits (the rules' opt-in).
llvm::Expected<VariantInput> readVariantInput(llvm::StringRef argument);

/// Reads one command-line argument: a "VARIANT.json=IMAGE" pair as above,
/// or "METADATA_DIR=IMAGE_DIR", two directories written by `kilnc compile
/// --autotune` (the same one for cubins): every config<K>.json in the first,
/// in the order of K, with config<K>.cubin or config<K>.ptx from the second.
llvm::Expected<std::vector<VariantInput>>
readVariantInputs(llvm::StringRef argument);

/// Reads one --tuning-table argument: "PATH", or "NAME=PATH" to name the
/// file NAME in errors and in the generated code.
llvm::Expected<TuningTableInput> readTuningTable(llvm::StringRef argument);

/// Generates the header and the source for `inputs`, embedding `tables`.
/// Errors on bad options, bad metadata, variants that cannot share a
/// launcher (see buildLauncherModel) and tables that are malformed or do not
/// fit the kernels (a kernel, overload or config the target does not have,
/// another key), each naming the input, the table file and field, or the
/// kernel at fault.
llvm::Expected<GeneratedFiles>
generateLaunchers(const CodegenOptions &options, const Templates &templates,
                  llvm::ArrayRef<VariantInput> inputs,
                  llvm::ArrayRef<TuningTableInput> tables = {});

/// The source of a target's tuner program: a main() that runs kiln-tune
/// (tools/kiln_tune) over the target's kernels.
std::string generateTunerMain(const CodegenOptions &options);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_CODEGEN_H
