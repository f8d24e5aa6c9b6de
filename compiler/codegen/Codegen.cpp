//===- Codegen.cpp - Render the launchers of a triton_kernel target -------===//

#include "Codegen.h"

#include "LauncherArguments.h"
#include "LauncherModel.h"
#include "TemplateRenderer.h"
#include "TritonTypes.h"
#include "VariantMetadata.h"

#include "kiln/tuning_table.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVectorExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cassert>
#include <map>
#include <set>

using namespace llvm;

namespace kiln::codegen {

namespace {

constexpr unsigned kLineWidth = 80;
/// Joins words that comment wrapping must keep on one line.
constexpr char kNoBreakSpace = '\x01';

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message.str());
}

bool isIdentifier(StringRef s) {
  return !s.empty() && !isDigit(s.front()) &&
         all_of(s, [](char c) { return isAlnum(c) || c == '_'; });
}

/// `text` as a C++ string literal. Octal escapes always take three digits, so
/// a following digit cannot extend them.
std::string cppLiteral(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c >= 0x20 && c < 0x7f && c != '?') { // '?' would form trigraphs
      out += c;
    } else {
      out += formatv("\\{0}{1}{2}", (c >> 6) & 7, (c >> 3) & 7, c & 7).str();
    }
  }
  return out + "\"";
}

/// Wraps `text` into "// " comment lines of at most kLineWidth columns
/// (longer words stand alone). kNoBreakSpace joins words that must stay
/// together and prints as a space.
std::string wrapComment(StringRef text) {
  SmallVector<StringRef> words;
  text.split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string out, line;
  for (StringRef word : words) {
    if (!line.empty() && line.size() + 1 + word.size() > kLineWidth - 3) {
      out += "// " + line + "\n";
      line.clear();
    }
    if (!line.empty())
      line += ' ';
    line += word.str();
  }
  if (!line.empty())
    out += "// " + line + "\n";
  std::replace(out.begin(), out.end(), kNoBreakSpace, ' ');
  if (!out.empty())
    out.pop_back(); // the template supplies the last newline
  return out;
}

/// "a", "a and b", "a, b and c".
std::string joinWords(ArrayRef<std::string> words) {
  if (words.size() <= 1)
    return words.empty() ? "" : words.front();
  return join(words.drop_back(), ", ") + " and " + words.back();
}

/// Lays out `head` + `items` separated by ", " + ")" starting at column
/// `column`: items fill lines of at most kLineWidth columns, leaving `reserve`
/// columns after the ")"; continuation lines align with the '(' or, when that
/// is too far right, are indented by four.
std::string wrapList(unsigned column, StringRef head,
                     ArrayRef<std::string> items, unsigned reserve) {
  unsigned indent = column + head.size();
  std::string out = head.str();
  std::string line; // the current line after `indent`
  bool fresh = false;
  if (indent > 40) {
    indent = 4;
    fresh = true;
  }
  unsigned used = fresh ? indent : column + head.size();
  for (auto [i, item] : enumerate(items)) {
    bool last = i + 1 == items.size();
    std::string piece = item + (last ? ")" : ",");
    unsigned width = piece.size() + (last ? reserve : 0);
    bool first = i == 0;
    if (fresh && first) {
      out += "\n" + std::string(indent, ' ') + piece;
      used = indent + piece.size();
    } else if (!first && used + 1 + width > kLineWidth) {
      out += "\n" + std::string(indent, ' ') + piece;
      used = indent + piece.size();
    } else {
      out += (first ? "" : " ") + piece;
      used += (first ? 0 : 1) + piece.size();
    }
  }
  if (items.empty())
    out += ")";
  return out;
}

/// Joins `terms` with " && ", breaking lines before kLineWidth; continuation
/// lines start at column `indent`. `column` is where the first term starts
/// and `reserve` what follows the last.
std::string wrapConjunction(ArrayRef<std::string> terms, unsigned column,
                            unsigned indent, unsigned reserve) {
  std::string out;
  unsigned used = column;
  for (auto [i, term] : enumerate(terms)) {
    bool last = i + 1 == terms.size();
    std::string piece = term + (last ? "" : " &&");
    unsigned width = piece.size() + (last ? reserve : 0);
    if (i > 0 && used + 1 + width > kLineWidth) {
      out += "\n" + std::string(indent, ' ');
      used = indent;
    } else if (i > 0) {
      out += " ";
      ++used;
    }
    out += piece;
    used += piece.size();
  }
  return out;
}

std::string includeGuard(StringRef includePath) {
  std::string guard;
  for (char c : includePath)
    guard += isAlnum(c) ? toUpper(c) : '_';
  return guard + "_";
}

/// A C++ name for Triton parameter `name`: keywords and the launcher's own
/// parameter names get a trailing underscore.
std::string cppParamName(StringRef name) {
  static const StringSet<> reserved = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char16_t", "char32_t",
      "char8_t", "class", "co_await", "co_return", "co_yield", "compl",
      "concept", "const", "const_cast", "consteval", "constexpr", "constinit",
      "continue", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
      "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof",
      "static", "static_assert", "static_cast", "struct", "switch", "template",
      "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq",
      // The launcher's own parameters and locals.
      "grid", "stream", "args", "config", "kiln", "absl", "position"};
  return reserved.contains(name) ? name.str() + "_" : name.str();
}

/// The cubin as rows of hex bytes, 12 per row.
std::string cubinBytes(StringRef cubin) {
  std::string out;
  out.reserve(cubin.size() * 6 + cubin.size() / 2);
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < cubin.size(); ++i) {
    unsigned char byte = cubin[i];
    out += i % 12 == 0 ? (i == 0 ? "    " : "\n    ") : " ";
    out += "0x";
    out += digits[byte >> 4];
    out += digits[byte & 15];
    out += ',';
  }
  return out;
}

/// "sm_90a" -> "Sm90a", for symbol names.
std::string archSymbol(StringRef arch) {
  std::string out;
  bool upper = true;
  for (char c : arch) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? toUpper(c) : c;
    upper = false;
  }
  return out;
}

/// "fp32 BLOCK=1024 num_warps=4": the pointee types (or, without pointers,
/// the scalar types), constexpr values and the launch options that differ
/// from Triton's defaults except num_warps, which is always shown.
std::string shortConfig(const VariantMetadata &m) {
  std::vector<std::string> types;
  auto addType = [&](StringRef type) {
    if (!is_contained(types, type.str()))
      types.push_back(type.str());
  };
  for (const ParamMetadata &p : m.params)
    if (isPointerType(p.type))
      addType(StringRef(p.type).drop_front());
  if (types.empty())
    for (const ParamMetadata &p : m.params)
      if (!p.constexprValue)
        addType(p.type);
  std::vector<std::string> words;
  if (!types.empty())
    words.push_back(join(types, "/"));
  for (const ParamMetadata &p : m.params)
    if (p.constexprValue)
      words.push_back(p.displayName() + "=" + *p.constexprValue);
  for (const ConstexprMetadata &c : m.constexprs)
    words.push_back(c.name + "=" + c.value);
  words.push_back(formatv("num_warps={0}", m.numWarps));
  if (m.numStages != 3)
    words.push_back(formatv("num_stages={0}", m.numStages));
  if (m.numCtas != 1)
    words.push_back(formatv("num_ctas={0}", m.numCtas));
  return join(words, " ");
}

std::vector<std::string> sortedArchs(const std::set<std::string> &archs) {
  std::vector<std::string> sorted(archs.begin(), archs.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const std::string &a, const std::string &b) {
                     return archLess(a, b);
                   });
  return sorted;
}

/// The C++ type of a config field holding every value in `values`: int64_t
/// for integers, bool for True/False, double for numbers, else the text.
std::string configFieldType(ArrayRef<std::string> values) {
  auto all = [&](auto predicate) { return all_of(values, predicate); };
  auto isInt = [](StringRef v) {
    int64_t i;
    return !v.getAsInteger(0, i);
  };
  auto isBool = [](StringRef v) { return v == "True" || v == "False"; };
  auto isNumber = [&](StringRef v) {
    double d;
    return isInt(v) || !v.getAsDouble(d);
  };
  if (all(isInt))
    return "int64_t";
  if (all(isBool))
    return "bool";
  if (all(isNumber))
    return "double";
  return "const char*";
}

/// `value` as a C++ expression of config field type `type`.
std::string configFieldValue(StringRef type, StringRef value) {
  if (type == "int64_t") {
    int64_t i = 0;
    value.getAsInteger(0, i);
    return i == INT64_MIN ? "INT64_MIN" : std::to_string(i);
  }
  if (type == "bool")
    return value == "True" ? "true" : "false";
  if (type == "double") {
    int64_t i;
    if (!value.getAsInteger(0, i))
      return std::to_string(i) + ".0";
    return value.str();
  }
  return cppLiteral(value);
}

/// The condition that `config.field` equals `literal`.
std::string configFieldTest(StringRef type, StringRef field,
                            StringRef literal) {
  if (type == "const char*")
    return formatv("kiln::internal::SameText(config.{0}, {1})", field, literal)
        .str();
  if (type == "bool")
    return (literal == "true" ? "" : "!") + ("config." + field).str();
  return formatv("config.{0} == {1}", field, literal).str();
}

/// What the build embeds for one autotuned kernel: its key, the names of
/// its configs and overloads as tables write them, and the tables' results
/// for it, each ranking as positions in its overload's configs.
struct TuningPlan {
  struct Result {
    std::vector<int64_t> key;
    std::vector<unsigned> ranking;
    std::vector<double> ms;
  };
  struct Table {
    std::string origin;
    kiln::TuningDevice device;
    std::string kilnVersion;
    unsigned overload = 0;
    std::vector<Result> results; // sorted by key
  };
  /// The key names the launchers pass values of (integer parameters only)
  /// and the parameters' indices.
  std::vector<std::string> keyNames;
  std::vector<unsigned> keyParams;
  /// Per kernel config; per overload.
  std::vector<std::string> configNames;
  std::vector<std::string> overloadTypes;
  std::vector<Table> tables;
};

/// The plan of an autotuned kernel, before tables: its key (the decorator's
/// names that are integer parameters; upstream keys tensors by dtype, which
/// Kiln's overloads already separate, and ignores names that are not
/// arguments), configs and overloads.
TuningPlan planTuning(const KernelModel &kernel) {
  TuningPlan plan;
  const VariantMetadata &first =
      kernel.variants[kernel.overloads.front().configs.front().variants.front()]
          .metadata;
  for (const std::string &name : *kernel.autotuneKey)
    for (auto [i, p] : enumerate(first.params))
      if (p.name == name && p.tupleIndex.empty() && isIntegerType(p.type) &&
          !is_contained(plan.keyNames, name)) {
        plan.keyNames.push_back(name);
        plan.keyParams.push_back(i);
      }
  for (const ConfigModel &config : kernel.configs)
    plan.configNames.push_back(describeConfig(kernel, config));
  for (const OverloadModel &overload : kernel.overloads) {
    const VariantMetadata &m =
        kernel.variants[overload.configs.front().variants.front()].metadata;
    std::vector<std::string> types;
    for (const ParamMetadata &p : m.params)
      types.push_back(p.type);
    plan.overloadTypes.push_back(join(types, ", "));
  }
  return plan;
}

/// Checks `table` (parsed from `origin`) against the target's kernels and
/// adds its results to their plans. Errors name the file and the field.
Error attachTable(StringRef origin, const kiln::TuningTable &table,
                  ArrayRef<KernelModel> kernels,
                  std::vector<std::optional<TuningPlan>> &plans) {
  for (auto [k, tuned] : enumerate(table.kernels)) {
    std::string at = formatv("{0}: kernels[{1}]", origin, k).str();
    auto found = find_if(kernels, [&](const KernelModel &kernel) {
      return kernel.name == tuned.kernel;
    });
    if (found == kernels.end()) {
      std::vector<std::string> names;
      for (const KernelModel &kernel : kernels)
        names.push_back(kernel.name);
      return makeError(at + ".kernel: '" + tuned.kernel +
                       "' is not a kernel of this target (it has " +
                       joinWords(names) + ")");
    }
    unsigned index = found - kernels.begin();
    if (!plans[index])
      return makeError(at + ".kernel: '" + tuned.kernel +
                       "' was not built with autotune (autotune = True, "
                       "AUTOTUNE), so its launchers choose no config by "
                       "tuning");
    TuningPlan &plan = *plans[index];
    if (tuned.key != plan.keyNames)
      return makeError(at + ".key: [" + join(tuned.key, ", ") +
                       "] is not the kernel's key; its launchers pass [" +
                       join(plan.keyNames, ", ") +
                       "] (the @triton.autotune key's integer arguments)");
    std::map<unsigned, TuningPlan::Table> byOverload;
    for (auto [r, result] : enumerate(tuned.results)) {
      std::string resultAt = formatv("{0}.results[{1}]", at, r).str();
      auto overload = find(plan.overloadTypes, result.types);
      if (overload == plan.overloadTypes.end())
        return makeError(resultAt + ".types: no overload of " + tuned.kernel +
                         " takes (" + result.types + "); compiled: (" +
                         join(plan.overloadTypes, "), (") + ")");
      unsigned o = overload - plan.overloadTypes.begin();
      const OverloadModel &model = found->overloads[o];
      TuningPlan::Result out;
      out.key = result.key;
      for (auto [i, ranked] : enumerate(result.ranking)) {
        auto position = find_if(model.configs, [&](const auto &c) {
          return plan.configNames[c.config] == ranked.config;
        });
        if (position == model.configs.end()) {
          std::vector<std::string> compiled;
          for (const OverloadConfigModel &c : model.configs)
            compiled.push_back("'" + plan.configNames[c.config] + "'");
          return makeError(formatv("{0}.ranking[{1}].config: '{2}' is not a "
                                   "compiled config of {3} for these types; "
                                   "compiled: {4}. Rerun kiln-tune after "
                                   "changing the configs",
                                   resultAt, i, ranked.config, tuned.kernel,
                                   join(compiled, ", "))
                               .str());
        }
        out.ranking.push_back(position - model.configs.begin());
        out.ms.push_back(ranked.ms);
      }
      TuningPlan::Table &entry = byOverload[o];
      entry.origin = origin.str();
      entry.device = table.device;
      entry.kilnVersion = table.kiln_version;
      entry.overload = o;
      entry.results.push_back(std::move(out));
    }
    for (auto &[o, entry] : byOverload) {
      // Sorted, so that the embedded bytes do not depend on the file's order.
      std::stable_sort(
          entry.results.begin(), entry.results.end(),
          [](const TuningPlan::Result &a, const TuningPlan::Result &b) {
            return a.key < b.key;
          });
      plan.tables.push_back(std::move(entry));
    }
  }
  return Error::success();
}

/// Builds the template values of one kernel.
/// FNV-1a 64 of `text`, 16 hex digits.
std::string fnv1a64(StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return formatv("{0:x-16}", hash).str();
}

/// Where the images' bytes go (CodegenOptions::embed), under which symbols,
/// and, with Embed::Incbin, which shard assembles each.
class ImageEmbedder {
public:
  explicit ImageEmbedder(const CodegenOptions &options)
      : options(options),
        shards(std::max(1u, options.embed == CodegenOptions::Embed::Incbin
                                ? options.asmShards
                                : 1u)),
        // Unique per target (its include path), so that two targets' images
        // never clash in one binary; hidden, so shared libraries keep theirs.
        symbolPrefix("kiln_" + fnv1a64(options.includePath)) {}

  /// The template fields of one image of variant `index` of `kernel`.
  /// A bad image path is recorded in error().
  TemplateDict add(StringRef kernel, unsigned index, const ImageModel &image) {
    std::string stored = image.bytes;
    if (options.compressZstd) {
      SmallVector<uint8_t, 0> compressed;
      compression::zstd::compress(arrayRefFromStringRef(image.bytes),
                                  compressed, kZstdLevel);
      stored.assign(compressed.begin(), compressed.end());
    }
    TemplateDict dict;
    std::string symbol;
    if (options.embed == CodegenOptions::Embed::Hex) {
      symbol = formatv("k{0}{1}{2}", image.isPtx ? "Ptx" : "Cubin", index,
                       archSymbol(image.arch));
      TemplateDict hex;
      hex.set("cubin_bytes", cubinBytes(stored));
      std::vector<TemplateDict> definitions;
      definitions.push_back(std::move(hex));
      dict.setList("hex_definition", std::move(definitions));
      dict.set("size_expression", "sizeof(" + symbol + ")");
    } else {
      if (firstError.empty() &&
          (image.path.empty() ||
           StringRef(image.path).find_first_of("\"\\\n") != StringRef::npos))
        firstError = "kernel " + kernel.str() + ": image file '" + image.path +
                     "' cannot be named in an .incbin directive (no quotes, "
                     "backslashes or newlines)";
      symbol =
          formatv("{0}_{1}_v{2}_{3}{4}", symbolPrefix, kernel, index,
                  StringRef(image.arch).lower(), image.isPtx ? "_ptx" : "");
      dict.setList("hex_definition", {});
      dict.set("size_expression", std::to_string(stored.size()));
      // The shard with the fewest bytes so far: shards take about as long.
      Shard &shard = *std::min_element(
          shards.begin(), shards.end(),
          [](const Shard &a, const Shard &b) { return a.bytes < b.bytes; });
      ShardImage entry{symbol,
                       image.path,
                       image.isPtx,
                       0,
                       stored.size(),
                       formatv("{0} variant {1}, {2} {3}", kernel, index,
                               image.arch, image.isPtx ? "PTX" : "cubin")};
      if (options.compressZstd) {
        entry.offset = shard.blob.size();
        shard.blob += stored;
      }
      shard.bytes += stored.size();
      shard.images.push_back(std::move(entry));
      declarations.push_back(symbol);
    }
    dict.set("cubin_symbol", symbol);
    dict.set("cubin_size", std::to_string(stored.size()));
    dict.set("compression_fields",
             options.compressZstd
                 ? formatv(",\n     kiln::ImageCompression::kZstd, "
                           "/*uncompressed_size=*/{0}",
                           image.bytes.size())
                       .str()
                 : std::string());
    return dict;
  }

  /// The first bad image path, or "".
  const std::string &error() const { return firstError; }

  /// Whether images are stored compressed (their compression_fields set).
  bool compresses() const { return options.compressZstd; }

  /// The `extern` declarations the source needs (Incbin only).
  std::vector<TemplateDict> externDeclarations() const {
    std::vector<TemplateDict> list;
    for (const std::string &symbol : declarations) {
      TemplateDict d;
      d.set("cubin_symbol", symbol);
      list.push_back(std::move(d));
    }
    return list;
  }

  /// Renders the shards (and compressed blobs) into `files` (Incbin only).
  Error finish(const Templates &templates, StringRef sourcePath,
               GeneratedFiles &files) const {
    if (options.embed != CodegenOptions::Embed::Incbin)
      return Error::success();
    for (auto [k, shard] : enumerate(shards)) {
      std::string blobPath = formatv("{0}{1}.bin", options.asmPrefix, k);
      TemplateDict root;
      root.set("source_path", sourcePath.str());
      root.set("shard", std::to_string(k));
      root.set("shard_count", std::to_string(shards.size()));
      std::vector<TemplateDict> images;
      for (const ShardImage &image : shard.images) {
        TemplateDict d;
        d.set("image_description", image.description);
        d.set("asm_lines", asmLines(image, blobPath));
        images.push_back(std::move(d));
      }
      root.setList("images", std::move(images));
      Expected<std::string> text =
          renderTemplate(templates.images, root, "images.cc.tmpl");
      if (!text)
        return text.takeError();
      files.extraFiles.emplace_back(
          formatv("{0}{1}.cc", options.asmPrefix, k).str(), std::move(*text));
    }
    if (options.compressZstd)
      for (auto [k, shard] : enumerate(shards))
        files.extraFiles.emplace_back(
            formatv("{0}{1}.bin", options.asmPrefix, k).str(), shard.blob);
    return Error::success();
  }

private:
  // zstd's level 3 (its default): fast enough that this serial step stays
  // small; cubins and PTX shrink about 3x and 8x.
  static constexpr int kZstdLevel = 3;

  struct ShardImage {
    std::string symbol;
    std::string path;
    bool isPtx;
    size_t offset; // in the shard's blob, when compressed
    size_t size;   // bytes stored
    std::string description;
  };
  struct Shard {
    std::vector<ShardImage> images;
    size_t bytes = 0;
    std::string blob; // compressed images, concatenated
  };

  /// The asm statement's operand, one C++ string literal per line.
  std::string asmLines(const ShardImage &image, StringRef blobPath) const {
    std::vector<std::string> lines = {
        ".pushsection .rodata.kiln_images,\"a\",%progbits",
        ".balign 64",
        ".globl " + image.symbol,
        ".hidden " + image.symbol,
        ".type " + image.symbol + ", %object",
        image.symbol + ":",
    };
    auto where = [&](StringRef path) {
      if (options.incbinDir.empty() || sys::path::is_absolute(path))
        return path.str();
      SmallString<128> joined(options.incbinDir);
      sys::path::append(joined, sys::path::Style::posix, path);
      return joined.str().str();
    };
    if (options.compressZstd) {
      lines.push_back(formatv(".incbin \"{0}\", {1}, {2}", where(blobPath),
                              image.offset, image.size));
    } else {
      lines.push_back(".incbin \"" + where(image.path) + "\"");
      if (image.isPtx)
        lines.push_back(".byte 0"); // cuModuleLoadData reads PTX up to a NUL
    }
    lines.push_back(formatv(".size {0}, {1}", image.symbol, image.size));
    lines.push_back(".popsection");
    // One C++ literal per line, "\n" spelled out for the reader: the lines
    // hold no backslash or newline, only quotes to escape.
    std::string out;
    for (auto [i, line] : enumerate(lines)) {
      out += i ? "\n    \"" : "\"";
      for (char c : line)
        out += c == '"' ? std::string("\\\"") : std::string(1, c);
      out += "\\n\"";
    }
    return out;
  }

  const CodegenOptions &options;
  std::vector<Shard> shards;
  std::string symbolPrefix;
  std::vector<std::string> declarations;
  std::string firstError;
};

class KernelRenderer {
public:
  KernelRenderer(const KernelModel &kernel, const TuningPlan *plan,
                 ImageEmbedder &embedder)
      : kernel(kernel), plan(plan), embedder(embedder) {
    configType = kernel.cppName + "_config";
    for (auto [i, name] : enumerate(kernel.constexprNames)) {
      std::vector<std::string> values;
      for (const ConfigModel &config : kernel.configs)
        values.push_back(config.constexprValues[i]);
      fields.push_back({cppParamName(name), configFieldType(values)});
    }
  }

  TemplateDict build(std::set<std::string> &allArchs) {
    std::set<std::string> archs;
    std::vector<TemplateDict> variants;
    for (auto [index, variant] : enumerate(kernel.variants)) {
      variants.push_back(variantDict(index, variant));
      for (const ImageModel &image : variant.images)
        if (!image.isPtx)
          archs.insert(image.arch);
    }
    allArchs.insert(archs.begin(), archs.end());

    std::vector<TemplateDict> overloads;
    std::vector<std::string> configs;
    for (const OverloadModel &overload : kernel.overloads) {
      overloads.push_back(overloadDict(overload));
      for (const OverloadConfigModel &config : overload.configs) {
        std::string text =
            "(" +
            shortConfig(kernel.variants[config.variants.front()].metadata) +
            ")";
        std::replace(text.begin(), text.end(), ' ', kNoBreakSpace);
        configs.push_back(text);
      }
    }

    TemplateDict dict;
    dict.set("kernel", kernel.cppName);
    dict.set("kernel_name", kernel.name);
    dict.set("kernel_literal", cppLiteral(kernel.name));
    dict.set("variant_count", std::to_string(kernel.variants.size()));
    dict.set(
        "kernel_comment",
        wrapComment(formatv("{0}: variant{1} {2}; archs {3}.", kernel.name,
                            configs.size() == 1 ? "" : "s", join(configs, ", "),
                            join(sortedArchs(archs), ", "))
                        .str()));
    dict.set("config_type", configType);
    dict.set("config_comment", configComment());
    std::vector<TemplateDict> fieldDicts;
    const ConfigModel &defaults = kernel.configs.front();
    for (auto [i, field] : enumerate(fields)) {
      TemplateDict f;
      f.set("field_declaration",
            formatv("{0} {1} = {2};", field.type, field.name,
                    configFieldValue(field.type, defaults.constexprValues[i]))
                .str());
      fieldDicts.push_back(std::move(f));
    }
    for (auto [name, value] :
         {std::pair<const char *, int64_t>{"num_warps", defaults.numWarps},
          {"num_stages", defaults.numStages},
          {"num_ctas", defaults.numCtas}}) {
      TemplateDict f;
      f.set("field_declaration", formatv("int {0} = {1};", name, value).str());
      fieldDicts.push_back(std::move(f));
    }
    dict.setList("config_fields", std::move(fieldDicts));
    std::vector<TemplateDict> configDicts;
    for (auto [index, config] : enumerate(kernel.configs)) {
      TemplateDict c;
      c.set("config_index", std::to_string(index));
      std::vector<std::string> values;
      for (auto [i, field] : enumerate(fields))
        values.push_back(
            configFieldValue(field.type, config.constexprValues[i]));
      values.push_back(std::to_string(config.numWarps));
      values.push_back(std::to_string(config.numStages));
      values.push_back(std::to_string(config.numCtas));
      std::string initializer = wrapList(
          /*column=*/0,
          formatv("constexpr {0} kConfig{1} = {{", configType, index).str(),
          values, /*reserve=*/1);
      initializer.back() = '}'; // wrapList closes with ')'
      c.set("config_initializer", initializer);
      c.set("config_description",
            wrapComment(formatv("Config {0}: {1}.", index,
                                describeConfig(kernel, config))
                            .str()));
      configDicts.push_back(std::move(c));
    }
    dict.setList("configs", std::move(configDicts));
    dict.setList("variants", std::move(variants));
    dict.setList("overloads", std::move(overloads));
    dict.setList("descriptor_tables", std::move(descriptorTables));
    std::vector<TemplateDict> tuning;
    if (plan) {
      TemplateDict data;
      data.set("tuning_data", tuningData());
      tuning.push_back(std::move(data));
    }
    dict.setList("tuning", std::move(tuning));
    dict.set("tuning_pointer", plan ? "&kTuning" : "nullptr");
    dict.setList("tuning_launchers", std::move(tuningLaunchers));
    return dict;
  }

private:
  struct Field {
    std::string name; // C++ name
    std::string type; // C++ type
  };

  std::string configComment() const {
    std::string defaults = describeConfig(kernel, kernel.configs.front());
    std::replace(defaults.begin(), defaults.end(), ' ', kNoBreakSpace);
    std::string text = formatv(
        "The constexpr values and launch options of one of {0}'s compiled "
        "configurations, as Triton's launch keywords are: a launch given a "
        "config runs the variant compiled with exactly these values for the "
        "argument types, and calls a grid function with it (like `grid = "
        "lambda meta: ...`). The defaults are those of the first "
        "specialization: {1}.",
        kernel.name, defaults);
    return wrapComment(text);
  }

  TemplateDict variantDict(unsigned index, const VariantModel &variant) {
    const VariantMetadata &m = variant.metadata;
    TemplateDict dict;
    dict.set("index", std::to_string(index));
    std::string printable = variant.displayName;
    for (char &c : printable)
      if (static_cast<unsigned char>(c) < 0x20)
        c = ' ';
    dict.set("variant_comment",
             wrapComment(formatv("Variant {0}: {1}.", index, printable).str()));
    dict.set("name_literal", cppLiteral(variant.displayName));
    dict.set("entry_literal", cppLiteral(m.entry));
    dict.set("signature_literal", cppLiteral(m.signature));
    dict.set("source_hash_literal", cppLiteral(m.sourceHash));
    dict.set("compiler_literal", cppLiteral(m.compiler));
    dict.set("num_warps", std::to_string(m.numWarps));
    dict.set("num_stages", std::to_string(m.numStages));
    dict.set("num_ctas", std::to_string(m.numCtas));
    dict.set("aligned", variant.isAligned() ? "true" : "false");
    dict.set("num_images", std::to_string(variant.images.size()));
    dict.set("num_params", std::to_string(m.params.size()));
    dict.set("num_constexprs", std::to_string(m.constexprs.size()));
    dict.set("params_array",
             m.params.empty() ? "nullptr" : formatv("kParams{0}", index).str());
    dict.set("constexprs_array", m.constexprs.empty()
                                     ? "nullptr"
                                     : formatv("kConstexprs{0}", index).str());
    dict.setFlag("has_params", !m.params.empty());
    dict.setFlag("has_constexprs", !m.constexprs.empty());
    dict.set("global_scratch_field",
             m.globalScratchBytes
                 ? formatv(",\n     /*global_scratch_arg=*/{0}",
                           entryArgumentCount(m))
                       .str()
                 : std::string());

    std::vector<TemplateDict> params;
    for (const ParamMetadata &p : m.params) {
      TemplateDict param;
      param.set("param_name_literal", cppLiteral(p.displayName()));
      param.set("param_type_literal", cppLiteral(p.type));
      param.set("divisibility", std::to_string(p.divisibility));
      param.set("param_extra", p.constexprValue
                                   ? ", /*equal_to_1=*/false, /*value=*/" +
                                         cppLiteral(*p.constexprValue)
                               : p.equalToOne ? ", /*equal_to_1=*/true"
                                              : "");
      params.push_back(std::move(param));
    }
    dict.setList("params", std::move(params));

    std::vector<TemplateDict> constexprs;
    for (const ConstexprMetadata &c : m.constexprs) {
      TemplateDict constant;
      constant.set("constexpr_name_literal", cppLiteral(c.name));
      constant.set("constexpr_value_literal", cppLiteral(c.value));
      constexprs.push_back(std::move(constant));
    }
    dict.setList("constexprs", std::move(constexprs));

    std::vector<TemplateDict> images;
    for (const ImageModel &image : variant.images) {
      TemplateDict dictImage = embedder.add(kernel.cppName, index, image);
      dictImage.set("arch", image.arch);
      dictImage.set("arch_literal", cppLiteral(image.arch));
      dictImage.set("image_kind", image.isPtx ? "PTX" : "cubin");
      dictImage.set("format", image.isPtx ? "kiln::ImageFormat::kPtx"
                                          : "kiln::ImageFormat::kCubin");
      dictImage.set("registers", std::to_string(image.registers));
      dictImage.set("spills", std::to_string(image.spills));
      dictImage.set("shared_bytes", std::to_string(image.sharedBytes));
      // CubinImage's initializer is positional: the scratch size comes after
      // the compression fields, which an uncompressed image then spells out.
      std::string scratch;
      if (image.globalScratchBytes > 0 || image.producerWarps > 0 ||
          image.launchWarps > 0)
        scratch =
            (embedder.compresses() ? std::string()
                                   : ",\n     kiln::ImageCompression::kNone, "
                                     "/*uncompressed_size=*/0") +
            formatv(",\n     /*global_scratch_bytes=*/{0}",
                    image.globalScratchBytes)
                .str();
      if (image.producerWarps > 0 || image.launchWarps > 0)
        scratch +=
            formatv(",\n     /*producer_warps=*/{0}", image.producerWarps)
                .str();
      if (image.launchWarps > 0)
        scratch +=
            formatv(",\n     /*launch_warps=*/{0}", image.launchWarps).str();
      dictImage.set("global_scratch_fields", scratch);
      images.push_back(std::move(dictImage));
    }
    dict.setList("images", std::move(images));
    return dict;
  }

  /// What variant `v` requires of the arguments beyond the values every
  /// variant of its config requires (`shared`): the launcher's tests, in
  /// parameter order, and the same in words.
  struct Requirement {
    std::vector<std::string> terms;
    std::string words;
    bool requiresValues = false; // some argument must have a value
  };
  static Requirement requirementOf(const VariantMetadata &v,
                                   ArrayRef<std::string> names,
                                   ArrayRef<unsigned> shared) {
    Requirement r;
    std::vector<std::string> pointers, ones, values, integers, extents;
    for (auto [i, p] : enumerate(v.params)) {
      std::optional<std::string> value = p.requiredValue();
      if (value && !is_contained(shared, unsigned(i))) {
        r.terms.push_back(valueTest(p, names[i], /*equal=*/true));
        if (*value == "1")
          ones.push_back(p.displayName());
        else
          values.push_back(p.displayName() + kNoBreakSpace + "=" +
                           kNoBreakSpace + *value);
        r.requiresValues = true;
      } else if (p.divisibility == 16 && isPointerType(p.type)) {
        r.terms.push_back("kiln::internal::IsAligned16(" + names[i] + ")");
        pointers.push_back(p.displayName());
      } else if (std::optional<DescriptorType> desc =
                     parseDescriptorType(p.type);
                 desc && p.divisibility == 16) {
        // Packed before the variants are chosen (chooserDict).
        for (size_t d = 0; d < desc->blockShape.size(); ++d)
          r.terms.push_back(formatv("{0}.shape[{1}] % 16 == 0",
                                    descriptorAbiName(names[i]), d));
        extents.push_back(p.name);
      } else if (p.divisibility == 16) {
        r.terms.push_back(names[i] + " % 16 == 0");
        integers.push_back(p.displayName());
      }
    }
    std::vector<std::string> clauses;
    if (!pointers.empty())
      clauses.push_back(joinWords(pointers) +
                        (pointers.size() == 1 ? " is" : " are") +
                        " 16-byte aligned");
    if (!ones.empty())
      clauses.push_back(joinWords(ones) +
                        (ones.size() == 1 ? " equals" : " equal") + " 1");
    if (!values.empty())
      clauses.push_back(joinWords(values));
    if (!integers.empty())
      clauses.push_back(
          joinWords(integers) +
          (integers.size() == 1 ? " is a multiple" : " are multiples") +
          " of 16");
    if (!extents.empty())
      clauses.push_back("the extents of " + joinWords(extents) +
                        " are multiples of 16");
    r.words = joinWords(clauses);
    return r;
  }

  /// The test that argument `name` has the value parameter `p` requires
  /// (`equal`), or that it has another: "n == 1", "!flag".
  static std::string valueTest(const ParamMetadata &p, StringRef name,
                               bool equal) {
    std::string value = *p.requiredValue();
    if (value == "True" || value == "False")
      return ((value == "True") == equal ? "" : "!") + name.str();
    return (name + (equal ? " == " : " != ") + value).str();
  }

  /// How many parameters variant `v`'s entry point takes before the hidden
  /// global scratch pointer: the index of that pointer's slot in the
  /// argument array.
  static unsigned entryArgumentCount(const VariantMetadata &v) {
    unsigned count = 0;
    for (const ParamMetadata &p : v.params) {
      if (!p.passedToEntry())
        continue;
      std::optional<DescriptorType> desc = parseDescriptorType(p.type);
      count += desc ? 2 + 2 * desc->blockShape.size() : 1;
    }
    return count;
  }

  /// The argument array of variant `v`, wrapped for column `column`: its
  /// entry point's parameters, those it takes equal to 1 and constexpr
  /// tuple elements left out, then a null slot for the global scratch pointer
  /// when it takes one (the runtime fills it at each launch).
  static std::string argsDeclaration(const VariantMetadata &v,
                                     ArrayRef<std::string> names,
                                     unsigned column) {
    std::vector<std::string> addresses;
    for (auto [i, p] : enumerate(v.params)) {
      if (!p.passedToEntry())
        continue;
      if (std::optional<DescriptorType> desc = parseDescriptorType(p.type)) {
        // The descriptor ABI: tensor map, base, shape..., strides....
        std::string abi = "&" + descriptorAbiName(names[i]);
        addresses.push_back(abi + ".tensor_map");
        addresses.push_back(abi + ".base");
        for (size_t d = 0; d < desc->blockShape.size(); ++d)
          addresses.push_back(formatv("{0}.shape[{1}]", abi, d));
        for (size_t d = 0; d < desc->blockShape.size(); ++d)
          addresses.push_back(formatv("{0}.strides[{1}]", abi, d));
        continue;
      }
      addresses.push_back("&" + names[i]);
    }
    assert(addresses.size() == entryArgumentCount(v));
    if (v.globalScratchBytes)
      addresses.push_back("nullptr");
    if (addresses.empty())
      return "void** args = nullptr;";
    std::string declaration =
        wrapList(column, "void* args[] = {", addresses, /*reserve=*/1);
    declaration.back() = '}'; // wrapList closes with ')'
    return declaration + ";";
  }

  /// The checks of the arguments every variant takes equal to 1, the
  /// candidates (variants with assumptions, with their tests), the fallback
  /// (the general variant) and what the candidates require, for one config
  /// of one overload; conditions wrapped for an `if (` at column `column`.
  /// With `ownArgs`, each candidate and the fallback declare their own
  /// argument array.
  void chooserDict(TemplateDict &dict, const OverloadConfigModel &config,
                   ArrayRef<std::string> names, unsigned column, bool ownArgs,
                   std::vector<Requirement> &requirements) {
    std::vector<TemplateDict> checks, candidates, fallback;
    requirements.clear();
    const VariantMetadata &first =
        kernel.variants[config.variants.front()].metadata;
    std::vector<TemplateDict> descriptors;
    for (auto [i, p] : enumerate(first.params)) {
      std::optional<DescriptorType> desc = parseDescriptorType(p.type);
      if (!desc)
        continue;
      std::string pad(column, ' ');
      std::string abi = descriptorAbiName(names[i]);
      TemplateDict declaration;
      declaration.set(
          "descriptor_declaration",
          formatv(
              "kiln::internal::TensorDescriptorArgs<{0}> {1};\n"
              "{2}if (absl::Status status = "
              "kiln::internal::PackTensorDescriptor(\n"
              "{2}        {3}_data::kInfo, {3}_data::{4}, {5}.view(), {1});\n"
              "{2}    !status.ok()) {{\n"
              "{2}  return status;\n"
              "{2}}",
              desc->blockShape.size(), abi, pad, kernel.cppName,
              descriptorTable(overloadIndex, config.config, i), names[i])
              .str());
      descriptors.push_back(std::move(declaration));
    }
    dict.setList("descriptors", std::move(descriptors));
    std::vector<TemplateDict> elementChecks;
    for (unsigned i : config.requiredValues) {
      const ParamMetadata &p = first.params[i];
      TemplateDict check;
      check.set("argument", names[i]);
      check.set("argument_literal", cppLiteral(p.displayName()));
      if (!p.constexprValue) {
        checks.push_back(std::move(check));
        continue;
      }
      check.set("mismatch", valueTest(p, names[i], /*equal=*/false));
      check.set("value_text",
                p.type == "i1"
                    ? "std::string(" + names[i] + " ? \"True\" : \"False\")"
                    : "std::to_string(" + names[i] + ")");
      check.set("expected_literal", cppLiteral(*p.constexprValue));
      elementChecks.push_back(std::move(check));
    }
    for (unsigned index : config.variants) {
      const VariantMetadata &v = kernel.variants[index].metadata;
      Requirement r = requirementOf(v, names, config.requiredValues);
      TemplateDict candidate;
      candidate.set("variant_index", std::to_string(index));
      // A candidate's array is inside its `if`, the fallback's beside it.
      std::vector<TemplateDict> args;
      if (ownArgs) {
        TemplateDict declaration;
        declaration.set(
            "args_declaration",
            argsDeclaration(v, names, r.terms.empty() ? column : column + 2));
        args.push_back(std::move(declaration));
      }
      candidate.setList("own_args", std::move(args));
      if (r.terms.empty()) {
        fallback.push_back(std::move(candidate));
        continue;
      }
      candidate.set("condition", wrapConjunction(r.terms, column + 4,
                                                 column + 4, /*reserve=*/3));
      candidates.push_back(std::move(candidate));
      requirements.push_back(std::move(r));
    }
    std::vector<std::string> words;
    for (const Requirement &r : requirements)
      words.push_back(r.words);
    dict.set("config_index", std::to_string(config.config));
    dict.setList("equal_to_one", std::move(checks));
    dict.setList("constexpr_elements", std::move(elementChecks));
    dict.setList("candidates", std::move(candidates));
    dict.setList("fallback", std::move(fallback));
    dict.set("requirement_literal", cppLiteral(join(words, "; or ")));
  }

  /// The test that `config` equals compiled config `index`, wrapped for an
  /// `if (` at column 2.
  std::string configCondition(unsigned index) {
    const ConfigModel &config = kernel.configs[index];
    std::vector<std::string> terms;
    for (auto [i, field] : enumerate(fields))
      terms.push_back(configFieldTest(
          field.type, field.name,
          configFieldValue(field.type, config.constexprValues[i])));
    terms.push_back(formatv("config.num_warps == {0}", config.numWarps));
    terms.push_back(formatv("config.num_stages == {0}", config.numStages));
    terms.push_back(formatv("config.num_ctas == {0}", config.numCtas));
    return wrapConjunction(terms, /*column=*/6, /*indent=*/6, /*reserve=*/3);
  }

  TemplateDict overloadDict(const OverloadModel &overload) {
    ++overloadIndex;
    const VariantMetadata &m =
        kernel.variants[overload.configs.front().variants.front()].metadata;
    // `names`: per parameter, the C++ expression of its argument (an
    // element of a tuple argument is read with std::get).
    std::vector<std::string> names, cppParams, typed, types;
    const std::vector<LauncherArgument> arguments = launcherArguments(m);
    for (const LauncherArgument &argument : arguments) {
      std::string name = cppParamName(argument.name);
      cppParams.push_back(argument.cppType + " " + name);
      types.push_back(argument.tritonType);
      for (unsigned i : argument.params)
        names.push_back(elementExpression(name, m.params[i].tupleIndex));
    }
    for (const ParamMetadata &p : m.params)
      typed.push_back(p.displayName() + kNoBreakSpace +
                      (p.constexprValue ? "=" + std::string(1, kNoBreakSpace) +
                                              *p.constexprValue
                                        : p.type));
    // One argument array for the whole launcher, unless its variants leave
    // out different arguments (those they take equal to 1).
    std::set<std::string> declarations;
    for (const OverloadConfigModel &config : overload.configs)
      for (unsigned index : config.variants)
        declarations.insert(argsDeclaration(kernel.variants[index].metadata,
                                            names, /*column=*/2));
    // Descriptor arguments are packed per config, before the arrays.
    bool hasDescriptors = any_of(m.params, [](const ParamMetadata &p) {
      return parseDescriptorType(p.type).has_value();
    });
    const bool ownArgs = declarations.size() > 1 || hasDescriptors;
    for (const OverloadConfigModel &config : overload.configs)
      addDescriptorTables(config,
                          kernel.variants[config.variants.front()].metadata);
    std::vector<TemplateDict> sharedArgs;
    if (!ownArgs) {
      TemplateDict declaration;
      declaration.set("args_declaration", *declarations.begin());
      sharedArgs.push_back(std::move(declaration));
    }
    const std::string gridType = "kiln::GridFor<" + configType + "> grid";
    std::vector<std::string> signatureItems = {gridType, "CUstream stream"};
    append_range(signatureItems, cppParams);
    std::vector<std::string> configItems = {"const " + configType + "& config",
                                            gridType, "CUstream stream"};
    append_range(configItems, cppParams);

    TemplateDict dict;
    dict.set("signature",
             wrapList(/*column=*/13, "launch_" + kernel.cppName + "(",
                      signatureItems, /*reserve=*/2));
    dict.set("config_signature",
             wrapList(/*column=*/13, "launch_" + kernel.cppName + "(",
                      configItems,
                      /*reserve=*/2));
    dict.setList("shared_args", std::move(sharedArgs));

    // The same launchers for pointers to CUDA's and torch's 16- and 8-bit
    // float types, forwarding with casts: the types have the bits of
    // Kiln's (kiln/float_types.h declares them, so no CUDA or torch header
    // is needed).
    std::vector<TemplateDict> foreign;
    for (auto [family, library] :
         {std::pair{ForeignTypes::Cuda, "CUDA's (cuda_fp16.h, cuda_bf16.h, "
                                        "cuda_fp8.h)"},
          std::pair{ForeignTypes::Torch, "torch's (c10::Half, c10::BFloat16, "
                                         "c10::Float8_e4m3fn, "
                                         "c10::Float8_e5m2)"}}) {
      std::vector<std::string> params, args;
      bool any = false;
      for (const LauncherArgument &argument : arguments) {
        std::string name = cppParamName(argument.name);
        // A tuple's pointers keep Kiln's element types.
        if (argument.isTuple) {
          params.push_back(argument.cppType + " " + name);
          args.push_back(name);
          continue;
        }
        const ParamMetadata &p = m.params[argument.params.front()];
        std::optional<std::string> type = foreignPointerType(p.type, family);
        any |= type.has_value();
        params.push_back((type ? *type : *cppTypeFor(p.type)) + " " + name);
        args.push_back(type ? "reinterpret_cast<" + *cppTypeFor(p.type) + ">(" +
                                  name + ")"
                            : name);
      }
      if (!any)
        continue;
      std::vector<std::string> items = {gridType, "CUstream stream"};
      append_range(items, params);
      std::vector<std::string> configParams = {
          "const " + configType + "& config", gridType, "CUstream stream"};
      append_range(configParams, params);
      std::vector<std::string> callArgs = {"grid", "stream"};
      append_range(callArgs, args);
      std::vector<std::string> configArgs = {"config", "grid", "stream"};
      append_range(configArgs, args);
      TemplateDict f;
      f.set("foreign_comment",
            wrapComment(std::string("The same two launchers for pointers to ") +
                        library + " element types."));
      f.set("foreign_signature",
            wrapList(/*column=*/20, "launch_" + kernel.cppName + "(", items,
                     /*reserve=*/2));
      f.set("foreign_call",
            wrapList(/*column=*/9, "launch_" + kernel.cppName + "(", callArgs,
                     /*reserve=*/1));
      f.set("foreign_config_signature",
            wrapList(/*column=*/20, "launch_" + kernel.cppName + "(",
                     configParams,
                     /*reserve=*/2));
      f.set("foreign_config_call",
            wrapList(/*column=*/9, "launch_" + kernel.cppName + "(", configArgs,
                     /*reserve=*/1));
      foreign.push_back(std::move(f));
    }
    dict.setList("foreign", std::move(foreign));

    std::vector<Requirement> defaultRequirements;
    TemplateDict defaultConfig;
    chooserDict(defaultConfig, overload.configs.front(), names, /*column=*/2,
                ownArgs, defaultRequirements);
    std::vector<TemplateDict> defaultList;
    defaultList.push_back(std::move(defaultConfig));
    dict.setList("default_config", std::move(defaultList));

    std::vector<TemplateDict> configs;
    std::vector<std::string> compiled;
    for (const OverloadConfigModel &config : overload.configs) {
      TemplateDict c;
      std::vector<Requirement> ignored;
      chooserDict(c, config, names, /*column=*/4, ownArgs, ignored);
      c.set("config_condition", configCondition(config.config));
      configs.push_back(std::move(c));
      compiled.push_back(
          "(" + describeConfig(kernel, kernel.configs[config.config]) + ")");
    }
    dict.setList("configs", std::move(configs));
    dict.set("types_literal", cppLiteral(join(types, ", ")));
    dict.set("compiled_configs_literal", cppLiteral(join(compiled, ", ")));

    std::set<std::string> archs;
    for (const OverloadConfigModel &config : overload.configs)
      for (unsigned index : config.variants)
        for (const ImageModel &image : kernel.variants[index].images)
          if (!image.isPtx)
            archs.insert(image.arch);
    const OverloadConfigModel &first = overload.configs.front();
    std::string defaults = describeConfig(kernel, kernel.configs[first.config]);
    std::string text = formatv(
        "Launches {0}({1}) with these types' default config, {2}: `grid` "
        "programs of {3} threads, on `stream`, asynchronously. Archs: {4}.",
        kernel.name, join(typed, ", "), defaults,
        32 * kernel.configs[first.config].numWarps,
        join(sortedArchs(archs), ", "));
    std::vector<std::string> ones, elements;
    for (unsigned i : first.requiredValues) {
      const ParamMetadata &p =
          kernel.variants[first.variants.front()].metadata.params[i];
      if (p.constexprValue)
        elements.push_back(p.displayName() + kNoBreakSpace + "=" +
                           kNoBreakSpace + *p.constexprValue);
      else
        ones.push_back(p.displayName());
    }
    if (!ones.empty())
      text += " Requires " + joinWords(ones) + " to be 1 (compiled for " +
              (ones.size() == 1 ? "it" : "them") +
              ", ':1'); another value gets an InvalidArgument status.";
    if (!elements.empty())
      text += " Requires " + joinWords(elements) + " (compiled for " +
              (elements.size() == 1 ? "that constexpr tuple element"
                                    : "those constexpr tuple elements") +
              "); another value gets an InvalidArgument status.";
    if (defaultRequirements.size() == 1 && first.hasGeneralVariant)
      text +=
          std::string(" Runs the variant compiled for ") +
          (defaultRequirements[0].requiresValues ? "such arguments"
                                                 : "16-divisible arguments") +
          " when " + defaultRequirements[0].words + ", else the general one.";
    else if (defaultRequirements.size() == 1)
      text += " Requires that " + defaultRequirements[0].words +
              " (no general variant was built); other arguments get an "
              "InvalidArgument status.";
    else if (!defaultRequirements.empty()) {
      std::vector<std::string> numbered;
      for (auto [i, r] : enumerate(defaultRequirements))
        numbered.push_back(formatv("({0}) {1}", i + 1, r.words).str());
      text += " Runs the first variant whose assumptions the arguments meet: " +
              join(numbered, "; ") +
              (first.hasGeneralVariant
                   ? "; else the general one."
                   : "; other arguments get an InvalidArgument status (no "
                     "general variant was built).");
    }
    std::vector<std::string> descriptorWords;
    for (const ParamMetadata &p : m.params)
      if (std::optional<DescriptorType> desc = parseDescriptorType(p.type)) {
        std::string shape =
            "[" +
            join(map_range(desc->blockShape,
                           [](int64_t d) { return std::to_string(d); }),
                 ",") +
            "]";
        descriptorWords.push_back(p.name + kNoBreakSpace + shape);
      }
    if (!descriptorWords.empty())
      text += " Descriptor arguments must have the block shape of the config "
              "that runs (by default " +
              joinWords(descriptorWords) +
              "), a 16-byte aligned base, strides in multiples of 16 bytes "
              "and a last stride of 1; the launcher checks them and returns "
              "an InvalidArgument status naming the argument otherwise.";
    text += " Errors name the kernel, the variant and the cause.";
    dict.set("overload_comment", wrapComment(text));
    std::vector<std::string> configWords;
    for (const OverloadConfigModel &config : overload.configs) {
      std::string words =
          "(" + describeConfig(kernel, kernel.configs[config.config]) + ")";
      std::replace(words.begin(), words.end(), ' ', kNoBreakSpace);
      configWords.push_back(words);
    }
    dict.set("config_overload_comment",
             wrapComment(formatv("The same with `config`, which must be one "
                                 "compiled for these types: {0}; else an "
                                 "InvalidArgument status. `grid` may be a "
                                 "function of the config.",
                                 join(configWords, ", "))
                             .str()));
    std::vector<TemplateDict> tuned;
    if (plan) {
      TemplateDict t;
      std::vector<std::string> keyValues;
      for (unsigned i : plan->keyParams)
        keyValues.push_back("static_cast<int64_t>(" + names[i] + ")");
      std::string declaration = "const int64_t* tuning_key = nullptr;";
      if (!keyValues.empty()) {
        declaration = wrapList(/*column=*/4, "const int64_t tuning_key[] = {",
                               keyValues, /*reserve=*/1);
        declaration.back() = '}'; // wrapList closes with ')'
        declaration += ";";
      }
      t.set("key_declaration", declaration);
      t.set("overload_index", std::to_string(overloadIndex));
      std::vector<TemplateDict> cases;
      // Every position, the first too: run-time tuning times each through
      // `run` (a chosen first config then takes the default path below).
      for (auto [position, config] : enumerate(overload.configs)) {
        TemplateDict c;
        c.set("position", std::to_string(position));
        std::vector<std::string> items = {
            formatv("{0}_data::kConfig{1}", kernel.cppName, config.config)
                .str(),
            "grid", "stream"};
        for (const LauncherArgument &argument : arguments)
          items.push_back(cppParamName(argument.name));
        c.set("call",
              wrapList(/*column=*/10, "return launch_" + kernel.cppName + "(",
                       items, /*reserve=*/1));
        cases.push_back(std::move(c));
      }
      t.setList("cases", std::move(cases));
      tuned.push_back(std::move(t));

      // The type-erased launcher of kiln-tune, which passes every parameter
      // (a tuple's elements one by one, as ParamInfo lists them): it packs
      // the tuples first. A None element has no value to read.
      std::string text = formatv(
          "absl::Status {0}_data::TuningLaunch{1}(int position, kiln::Grid "
          "grid,\n"
          "                                   CUstream stream,\n"
          "                                   const void* const* args) {{\n"
          "  (void)args;\n",
          kernel.cppName, overloadIndex);
      auto tuningArgument = [&](unsigned i) {
        const ParamMetadata &p = m.params[i];
        if (p.constexprValue && p.type == "none")
          return std::string("nullptr");
        return formatv("kiln::internal::TuningArgument<{0}>(args[{1}])",
                       launcherCppType(p), i)
            .str();
      };
      for (const LauncherArgument &argument : arguments) {
        if (!argument.isTuple)
          continue;
        std::string declaration = wrapList(
            /*column=*/2,
            "const " + argument.cppType + " " + cppParamName(argument.name) +
                "{",
            argumentInitializers(m, argument, tuningArgument), /*reserve=*/1);
        declaration.back() = '}'; // wrapList closes with ')'
        text += "  " + declaration + ";\n";
      }
      text += "  switch (position) {\n";
      for (auto [position, config] : enumerate(overload.configs)) {
        std::vector<std::string> items = {
            formatv("{0}_data::kConfig{1}", kernel.cppName, config.config)
                .str(),
            "grid", "stream"};
        for (const LauncherArgument &argument : arguments)
          items.push_back(argument.isTuple
                              ? cppParamName(argument.name)
                              : tuningArgument(argument.params.front()));
        text += formatv("    case {0}:\n      ", position).str() +
                wrapList(/*column=*/6, "return launch_" + kernel.cppName + "(",
                         items, /*reserve=*/1) +
                ";\n";
      }
      text += formatv("  }\n  return kiln::internal::NoSuchTuningPosition("
                      "{0}_data::kInfo, {1}, position);\n}",
                      kernel.cppName, overloadIndex)
                  .str();
      TemplateDict launcher;
      launcher.set("tuning_launcher", text);
      tuningLaunchers.push_back(std::move(launcher));
    }
    dict.setList("tuned", std::move(tuned));
    return dict;
  }

  /// "constexpr T name[] = {a, b, ...};", wrapped at kLineWidth.
  static std::string arrayDefinition(StringRef head,
                                     ArrayRef<std::string> items) {
    std::string text = wrapList(/*column=*/0, (head + " = {").str(), items,
                                /*reserve=*/2);
    text.back() = '}'; // wrapList closes with ')'
    return text + ";\n";
  }

  static std::string integer(int64_t v) {
    return v == INT64_MIN ? std::string("INT64_MIN") : std::to_string(v);
  }

  /// A float literal that reads back as `value` rounded to float.
  static std::string floatLiteral(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<float>(value));
    std::string text = buffer;
    if (text.find_first_of(".e") == std::string::npos)
      text += ".0";
    return text + "f";
  }

  /// The static tables of kiln/tuning.h for this kernel (plan != null).
  std::string tuningData() const {
    const TuningPlan &p = *plan;
    std::string out =
        "// Autotuning (kiln/tuning.h): the key, the configs and overloads as\n"
        "// tuning tables name them, and the tables the build embedded.\n";
    if (!p.keyNames.empty()) {
      out +=
          arrayDefinition("constexpr const char* kTuningKey[]",
                          map_to_vector(p.keyNames, [](const std::string &n) {
                            return cppLiteral(n);
                          }));
      out += arrayDefinition("constexpr int kTuningKeyParams[]",
                             map_to_vector(p.keyParams, [](unsigned i) {
                               return std::to_string(i);
                             }));
    }
    out += "constexpr const char* kTuningConfigs[] = {\n";
    for (const std::string &name : p.configNames)
      out += "    " + cppLiteral(name) + ",\n";
    out += "};\n";
    for (auto [o, overload] : enumerate(kernel.overloads)) {
      out += arrayDefinition(
          formatv("constexpr int kTuningOverload{0}Configs[]", o).str(),
          map_to_vector(overload.configs, [](const OverloadConfigModel &c) {
            return std::to_string(c.config);
          }));
      out += formatv("absl::Status TuningLaunch{0}(int position, kiln::Grid "
                     "grid, CUstream stream,\n"
                     "                           const void* const* args);\n",
                     o)
                 .str();
    }
    out += "constexpr kiln::TuningOverload kTuningOverloads[] = {\n";
    for (auto [o, overload] : enumerate(kernel.overloads))
      out += formatv("    {{{0},\n     kTuningOverload{1}Configs, {2}, "
                     "&TuningLaunch{1}},\n",
                     cppLiteral(p.overloadTypes[o]), o, overload.configs.size())
                 .str();
    out += "};\n";
    std::vector<std::string> tables;
    for (auto [t, table] : enumerate(p.tables)) {
      std::vector<std::string> keys, ranking, ms, results;
      for (const TuningPlan::Result &r : table.results) {
        results.push_back(
            formatv("{{{0}, kTable{1}Ranking + {2}, kTable{1}Ms + {2}, {3}}",
                    p.keyNames.empty()
                        ? std::string("nullptr")
                        : formatv("kTable{0}Keys + {1}", t, keys.size()).str(),
                    t, ranking.size(), r.ranking.size())
                .str());
        for (int64_t v : r.key)
          keys.push_back(integer(v));
        for (unsigned position : r.ranking)
          ranking.push_back(std::to_string(position));
        for (double v : r.ms)
          ms.push_back(floatLiteral(v));
      }
      out += wrapComment(formatv("{0}: {1} ({2}.{3}), overload {4}: {5} "
                                 "result{6}.",
                                 table.origin, table.device.name,
                                 table.device.compute_capability_major,
                                 table.device.compute_capability_minor,
                                 table.overload, table.results.size(),
                                 table.results.size() == 1 ? "" : "s")
                             .str()) +
             "\n";
      if (!p.keyNames.empty())
        out += arrayDefinition(
            formatv("constexpr int64_t kTable{0}Keys[]", t).str(), keys);
      out += arrayDefinition(
          formatv("constexpr int kTable{0}Ranking[]", t).str(), ranking);
      out += arrayDefinition(formatv("constexpr float kTable{0}Ms[]", t).str(),
                             ms);
      out += "constexpr kiln::EmbeddedTuningResult kTable" + std::to_string(t) +
             "Results[] = {\n";
      for (const std::string &r : results)
        out += "    " + r + ",\n";
      out += "};\n";
      tables.push_back(
          formatv("    {{{0}, {1},\n     {2}, {3}, /*sm_count=*/{4}, "
                  "/*driver_version=*/{5}, {6},\n     /*overload=*/{7}, "
                  "kTable{8}Results, {9}},\n",
                  cppLiteral(table.origin), cppLiteral(table.device.name),
                  table.device.compute_capability_major,
                  table.device.compute_capability_minor, table.device.sm_count,
                  table.device.driver_version, cppLiteral(table.kilnVersion),
                  table.overload, t, table.results.size())
              .str());
    }
    if (!tables.empty()) {
      out += "constexpr kiln::EmbeddedTuningTable kTuningTables[] = {\n";
      for (const std::string &t : tables)
        out += t;
      out += "};\n";
    }
    out += "kiln::internal::TuningCache tuning_cache;\n";
    out += formatv("constexpr kiln::KernelTuningInfo kTuning = {{\n"
                   "    {0}, {1}, /*num_key=*/{2},\n"
                   "    kTuningConfigs, /*num_configs=*/{3},\n"
                   "    kTuningOverloads, /*num_overloads=*/{4},\n"
                   "    {5}, /*num_tables=*/{6},\n"
                   "    &tuning_cache};",
                   p.keyNames.empty() ? "nullptr" : "kTuningKey",
                   p.keyNames.empty() ? "nullptr" : "kTuningKeyParams",
                   p.keyNames.size(), p.configNames.size(),
                   kernel.overloads.size(),
                   tables.empty() ? "nullptr" : "kTuningTables", tables.size())
               .str();
    return out;
  }

  /// The name of the packed ABI arguments of descriptor argument `name`.
  static std::string descriptorAbiName(StringRef name) {
    return (name + "_abi").str();
  }

  /// The table describing descriptor parameter `param` in config `config` of
  /// overload `overload`.
  static std::string descriptorTable(unsigned overload, unsigned config,
                                     unsigned param) {
    return formatv("kDescriptor{0}_{1}_{2}", overload, config, param).str();
  }

  /// The tables (kiln::internal::TensorDescriptorParam) of the descriptor
  /// parameters of one config of the current overload, whose variants share
  /// `m`'s descriptor types and tensor maps.
  void addDescriptorTables(const OverloadConfigModel &config,
                           const VariantMetadata &m) {
    for (auto [i, p] : enumerate(m.params)) {
      std::optional<DescriptorType> desc = parseDescriptorType(p.type);
      if (!desc)
        continue;
      std::string table = descriptorTable(overloadIndex, config.config, i);
      auto ints = [](ArrayRef<int64_t> values) {
        return join(
            map_range(values, [](int64_t d) { return std::to_string(d); }),
            ", ");
      };
      std::string text = formatv("// {0} in config {1} of overload {2}.\n"
                                 "constexpr int32_t {3}Block[] = {{{4}};\n",
                                 p.name, config.config, overloadIndex, table,
                                 ints(desc->blockShape));
      if (p.readsTensorMap)
        text += formatv("constexpr int32_t {0}Box[] = {{{1}};\n", table,
                        ints(p.tensorMapBox))
                    .str();
      text += formatv("constexpr kiln::internal::TensorDescriptorParam {0} = "
                      "{{\n    {1}, {2}, /*rank=*/{3}, {0}Block,\n"
                      "    /*box=*/{4}, /*swizzle_bytes=*/{5}};",
                      table, cppLiteral(p.name), cppLiteral(desc->element),
                      desc->blockShape.size(),
                      p.readsTensorMap ? table + "Box" : "nullptr",
                      p.tensorMapSwizzle)
                  .str();
      TemplateDict entry;
      entry.set("descriptor_table", text);
      descriptorTables.push_back(std::move(entry));
    }
  }

  const KernelModel &kernel;
  const TuningPlan *plan;
  ImageEmbedder &embedder;
  std::string configType;
  std::vector<Field> fields;
  int overloadIndex = -1;
  std::vector<TemplateDict> descriptorTables;
  std::vector<TemplateDict> tuningLaunchers;
};

} // namespace

Expected<Templates> loadTemplates(StringRef directory) {
  Templates templates;
  for (auto [file, out] :
       {std::pair<StringRef, std::string *>{"kernel.h.tmpl", &templates.header},
        {"kernel.cc.tmpl", &templates.source},
        {"images.cc.tmpl", &templates.images}}) {
    SmallString<256> path(directory);
    sys::path::append(path, file);
    ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
        MemoryBuffer::getFile(path, /*IsText=*/true);
    if (!buffer)
      return makeError("cannot read template " + path + ": " +
                       buffer.getError().message());
    *out = (*buffer)->getBuffer().str();
  }
  return templates;
}

Expected<VariantInput> readVariantInput(StringRef argument) {
  auto [jsonPath, cubinPath] = argument.split('=');
  if (jsonPath.empty() || cubinPath.empty())
    return makeError("expected VARIANT.json=VARIANT.cubin, got '" + argument +
                     "'");
  VariantInput input;
  input.origin = jsonPath.str();
  ErrorOr<std::unique_ptr<MemoryBuffer>> json =
      MemoryBuffer::getFile(jsonPath, /*IsText=*/true);
  if (!json)
    return makeError("cannot read " + jsonPath + ": " +
                     json.getError().message());
  input.metadataJson = (*json)->getBuffer().str();
  ErrorOr<std::unique_ptr<MemoryBuffer>> cubin = MemoryBuffer::getFile(
      cubinPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!cubin)
    return makeError("cannot read " + cubinPath + ": " +
                     cubin.getError().message());
  input.cubin = (*cubin)->getBuffer().str();
  input.path = cubinPath.str();
  input.isPtx = cubinPath.ends_with(".ptx");
  if (input.isPtx)
    input.cubin.push_back('\0'); // cuModuleLoadData reads PTX up to a NUL
  return input;
}

Expected<std::vector<VariantInput>> readVariantInputs(StringRef argument) {
  auto [metadataDir, imageDir] = argument.split('=');
  if (metadataDir.empty() || !sys::fs::is_directory(metadataDir)) {
    Expected<VariantInput> input = readVariantInput(argument);
    if (!input)
      return input.takeError();
    return std::vector<VariantInput>{std::move(*input)};
  }
  // config<K>.json, by K: the order of the @triton.autotune configs, whose
  // first is the default config.
  std::map<unsigned, std::string> configs;
  std::error_code ec;
  for (sys::fs::directory_iterator it(metadataDir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    StringRef stem = name;
    unsigned index;
    if (stem.consume_front("config") && stem.consume_back(".json") &&
        !stem.getAsInteger(10, index))
      configs[index] = stem.str();
  }
  if (ec)
    return makeError("cannot list " + metadataDir + ": " + ec.message());
  if (configs.empty())
    return makeError("directory " + metadataDir +
                     " has no config<K>.json (written by kilnc compile "
                     "--autotune)");
  // The decorator's key (absent from directories of older kilnc builds).
  std::optional<std::vector<std::string>> key;
  SmallString<128> keyPath(metadataDir);
  sys::path::append(keyPath, "autotune_key.txt");
  if (ErrorOr<std::unique_ptr<MemoryBuffer>> keyFile =
          MemoryBuffer::getFile(keyPath, /*IsText=*/true)) {
    key.emplace();
    SmallVector<StringRef> names;
    (*keyFile)->getBuffer().trim().split(names, ',', -1, /*KeepEmpty=*/false);
    for (StringRef name : names)
      key->push_back(name.trim().str());
  }
  std::vector<VariantInput> inputs;
  for (const auto &[index, stem] : configs) {
    SmallString<128> json(metadataDir), cubin(imageDir), ptx(imageDir);
    sys::path::append(json, "config" + stem + ".json");
    sys::path::append(cubin, "config" + stem + ".cubin");
    sys::path::append(ptx, "config" + stem + ".ptx");
    // The cubin, and the PTX that kilnc --ptx-output wrote beside it; or a
    // directory of PTX alone.
    bool hasCubin = sys::fs::exists(cubin);
    SmallVector<StringRef, 2> images;
    if (hasCubin)
      images.push_back(cubin);
    if (!hasCubin || sys::fs::exists(ptx))
      images.push_back(ptx);
    for (StringRef image : images) {
      Expected<VariantInput> input =
          readVariantInput((json + "=" + image).str());
      if (!input)
        return input.takeError();
      input->autotuneKey = key;
      inputs.push_back(std::move(*input));
    }
  }
  return inputs;
}

Expected<TuningTableInput> readTuningTable(StringRef argument) {
  auto [name, path] = argument.split('=');
  if (path.empty())
    path = name;
  ErrorOr<std::unique_ptr<MemoryBuffer>> file =
      MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return makeError("cannot read tuning table " + path + ": " +
                     file.getError().message());
  return TuningTableInput{name.str(), (*file)->getBuffer().str()};
}

std::string generateTunerMain(const CodegenOptions &options) {
  return formatv(
             "// The tuner of {0}: kiln-tune over the target's kernels.\n"
             "// Generated by kiln-codegen; do not edit.\n"
             "\n"
             "#include \"{0}\"\n"
             "#include \"kiln/tune/tune_main.h\"\n"
             "\n"
             "int main(int argc, char** argv) {{\n"
             "  return kiln::tune::TuneMain({1}::{2}_kernels(), argc, argv);\n"
             "}\n",
             options.includePath, options.cppNamespace, options.name)
      .str();
}

Expected<GeneratedFiles> generateLaunchers(const CodegenOptions &options,
                                           const Templates &templates,
                                           ArrayRef<VariantInput> inputs,
                                           ArrayRef<TuningTableInput> tables) {
  if (!isIdentifier(options.name))
    return makeError("--name must be an identifier, got '" + options.name +
                     "'");
  SmallVector<StringRef> parts;
  StringRef(options.cppNamespace).split(parts, "::");
  if (!all_of(parts, isIdentifier))
    return makeError("--namespace must be identifiers joined by '::', got '" +
                     options.cppNamespace + "'");
  StringRef includePath = options.includePath;
  if (!includePath.ends_with(".h") || sys::path::is_absolute(includePath) ||
      includePath.contains('"') || includePath.contains('\\'))
    return makeError("--include-path must be a relative path ending in .h, "
                     "got '" +
                     includePath + "'");
  if (inputs.empty())
    return makeError("no variants given (expected VARIANT.json=VARIANT.cubin "
                     "arguments)");

  std::vector<CompiledVariant> compiled;
  for (const VariantInput &input : inputs) {
    Expected<VariantMetadata> metadata =
        parseVariantMetadata(input.metadataJson, input.origin);
    if (!metadata)
      return metadata.takeError();
    compiled.push_back(CompiledVariant{input.origin, std::move(*metadata),
                                       input.cubin, input.isPtx,
                                       input.autotuneKey, input.path});
  }
  Expected<std::vector<KernelModel>> kernels = buildLauncherModel(compiled);
  if (!kernels)
    return kernels.takeError();

  std::vector<std::optional<TuningPlan>> plans;
  for (const KernelModel &kernel : *kernels)
    plans.push_back(kernel.autotuneKey ? std::optional(planTuning(kernel))
                                       : std::nullopt);
  for (const TuningTableInput &input : tables) {
    absl::StatusOr<kiln::TuningTable> table =
        kiln::ParseTuningTable(input.json, input.origin);
    if (!table.ok())
      return makeError(std::string(table.status().message()));
    if (Error err = attachTable(input.origin, *table, *kernels, plans))
      return std::move(err);
  }

  TemplateDict root;
  std::set<std::string> archs;
  if (options.compressZstd && !compression::zstd::isAvailable())
    return makeError("--compress zstd: this kiln-codegen's LLVM was built "
                     "without zstd");
  if (options.embed == CodegenOptions::Embed::Incbin &&
      options.asmPrefix.empty())
    return makeError("--embed incbin needs --asm-prefix");
  ImageEmbedder embedder(options);
  std::vector<TemplateDict> kernelDicts;
  std::vector<std::string> kernelNames;
  for (auto [kernel, plan] : zip(*kernels, plans)) {
    kernelDicts.push_back(
        KernelRenderer(kernel, plan ? &*plan : nullptr, embedder).build(archs));
    kernelNames.push_back(kernel.name);
  }
  if (!embedder.error().empty())
    return makeError(embedder.error());
  root.setList("extern_images", embedder.externDeclarations());
  root.set("name", options.name);
  root.setFlag("has_tuning", any_of(plans, [](const auto &plan) {
                 return plan.has_value();
               }));
  auto anyParam = [&](auto predicate) {
    return any_of(*kernels, [&](const KernelModel &k) {
      return any_of(k.variants, [&](const VariantModel &v) {
        return any_of(v.metadata.params, predicate);
      });
    });
  };
  root.setFlag("has_tuple_params", anyParam([](const ParamMetadata &p) {
                 return !p.tupleIndex.empty();
               }));
  root.setFlag("has_none_elements", anyParam([](const ParamMetadata &p) {
                 return p.constexprValue && p.type == "none";
               }));
  root.set("namespace", options.cppNamespace);
  root.set("include_path", includePath.str());
  root.set("source_path", (includePath.drop_back(2) + ".cc").str());
  root.set("include_guard", includeGuard(includePath));
  root.set("kernels_phrase", (kernelNames.size() == 1 ? "the Triton kernel "
                                                      : "the Triton kernels ") +
                                 joinWords(kernelNames));
  root.set("archs", join(sortedArchs(archs), ", "));
  root.set("input_count", std::to_string(inputs.size()));
  root.setList("kernels", std::move(kernelDicts));

  Expected<std::string> header =
      renderTemplate(templates.header, root, "kernel.h.tmpl");
  if (!header)
    return header.takeError();
  Expected<std::string> source =
      renderTemplate(templates.source, root, "kernel.cc.tmpl");
  if (!source)
    return source.takeError();
  GeneratedFiles files{std::move(*header), std::move(*source), {}};
  if (Error err = embedder.finish(
          templates, (includePath.drop_back(2) + ".cc").str(), files))
    return std::move(err);
  return files;
}

} // namespace kiln::codegen
