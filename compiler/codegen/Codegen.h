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
#include <utility>
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

  /// --embed: how the images' bytes reach the binary.
  enum class Embed {
    /// As hex arrays in the generated source, which the C++ compiler parses
    /// (about 6 bytes of source per image byte: slow for many variants).
    Hex,
    /// By the assembler: `asmShards` sources named `<asmPrefix><k>.cc`, each
    /// a file-scope asm block whose `.incbin` directives read the image files
    /// (or, compressed, `<asmPrefix><k>.bin`) at the paths given on the
    /// command line, relative to where the compiler runs. No C++ parse of the
    /// bytes; the shards compile in parallel. ELF targets.
    Incbin,
  };
  Embed embed = Embed::Hex;
  unsigned asmShards = 1;
  std::string asmPrefix;
  /// Where the compiler of the shards runs, relative to where the paths
  /// given (images, asmPrefix) are: a relative path P is read by `.incbin`
  /// as incbinDir/P. Empty: the same directory (Bazel: the execution root).
  std::string incbinDir;
  /// --compress zstd: each image is stored as one zstd frame, which the
  /// runtime inflates once, at the image's first load (it dlopens
  /// libzstd.so.1 then: no link-time dependency).
  bool compressZstd = false;
};

/// The text of the two templates.
struct Templates {
  std::string header; // kernel.h.tmpl
  std::string source; // kernel.cc.tmpl
  std::string images; // images.cc.tmpl (the Incbin shards)
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
  /// The image's path as given (what `.incbin` reads with Embed::Incbin).
  std::string path;
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
  /// With Embed::Incbin: (path, contents) of each shard source, then of each
  /// compressed blob; the paths start with CodegenOptions::asmPrefix.
  std::vector<std::pair<std::string, std::string>> extraFiles;
};

/// Reads kernel.h.tmpl, kernel.cc.tmpl and images.cc.tmpl from `directory`.
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
