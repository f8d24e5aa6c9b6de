//===- LauncherModel.cpp - Variants grouped into kernels and overloads ----===//

#include "LauncherModel.h"

#include "TritonTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace kiln::codegen {

namespace {

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message.str());
}

/// What identifies a variant apart from its arch.
std::string variantKey(const VariantMetadata &m) {
  std::string key =
      formatv("{0}|{1}|{2}|{3}|", m.entry, m.numWarps, m.numStages, m.numCtas);
  for (const ParamMetadata &p : m.params) {
    key += formatv("{0}:{1}:{2}{3}{4},", p.displayName(), p.type,
                   p.divisibility, p.equalToOne ? "=1" : "",
                   p.constexprValue ? "==" + *p.constexprValue : "")
               .str();
  }
  key += "|";
  for (const ConstexprMetadata &c : m.constexprs)
    key += c.displayName() + "=" + c.value + ",";
  return key;
}

/// What identifies an overload: the parameter types as C++ sees them (a
/// descriptor's block shape belongs to its config; a tuple's elements are
/// told apart by where they are).
std::string overloadKey(const VariantMetadata &m) {
  std::string key;
  for (const ParamMetadata &p : m.params)
    key += (p.tupleIndex.empty() ? "" : p.displayName() + ":") +
           overloadTypeKey(p.type) + ",";
  return key;
}

/// Whether integer type `type` ("i32", "u8", ...) holds `value`.
bool fitsIn(StringRef type, int64_t value) {
  unsigned bits = 64;
  StringRef(type).drop_front().getAsInteger(10, bits);
  if (type.starts_with("u"))
    return value >= 0 && (bits == 64 || value < (int64_t(1) << bits));
  return bits == 64 || (value >= -(int64_t(1) << (bits - 1)) &&
                        value < (int64_t(1) << (bits - 1)));
}

/// `m` with each constexpr element of a tuple parameter moved from its
/// constexprs to its params, as a slot of the tuple (ParamMetadata::
/// constexprValue) in its place among the run-time elements: the launcher's
/// std::array or std::tuple keeps the element, so that the caller passes the
/// whole tuple (`x.stride()`), and checks it against the compiled value. An
/// int element takes the C++ type of the tuple's run-time integer elements
/// when they share one that holds it (a stride beside i32 strides is an
/// int32_t), else int64_t; a bool element is a bool, a None element a
/// std::nullptr_t.
/// Errors on other constexpr elements (floats, dtypes, strings), which no
/// equality test of the argument would check faithfully, and on a tuple
/// without run-time elements, which has no place among the params.
Expected<VariantMetadata> withTupleSlots(VariantMetadata m, StringRef origin) {
  std::vector<ConstexprMetadata> constexprs;
  for (ConstexprMetadata &c : m.constexprs) {
    if (c.tupleIndex.empty()) {
      constexprs.push_back(std::move(c));
      continue;
    }
    int64_t integer;
    bool isInt = !StringRef(c.value).getAsInteger(10, integer);
    bool isBool = c.value == "True" || c.value == "False";
    if (!isInt && !isBool && c.value != "None")
      return makeError(formatv(
          "{0}: kernel {1}: tuple parameter '{2}' has the constexpr element "
          "{3}={4}; a launcher checks int, bool and None elements against "
          "the argument, not this one (give the element a type)",
          origin, m.kernel, c.name, c.displayName(), c.value));
    auto first = find_if(
        m.params, [&](const ParamMetadata &p) { return p.name == c.name; });
    if (first == m.params.end())
      return makeError(formatv(
          "{0}: kernel {1}: tuple parameter '{2}' has only constexpr "
          "elements ({3}={4}, ...); a launcher takes tuples with a run-time "
          "element (give an element a type)",
          origin, m.kernel, c.name, c.displayName(), c.value));
    auto last =
        std::find_if(first, m.params.end(),
                     [&](const ParamMetadata &p) { return p.name != c.name; });
    ParamMetadata slot;
    slot.name = c.name;
    slot.tupleIndex = c.tupleIndex;
    slot.constexprValue = c.value;
    if (isBool) {
      slot.type = "i1";
    } else if (!isInt) {
      slot.type = "none";
    } else {
      std::set<std::string> types;
      for (const ParamMetadata &p : make_range(first, last))
        if (!p.constexprValue && isIntegerType(p.type))
          types.insert(p.type);
      slot.type = types.size() == 1 && fitsIn(*types.begin(), integer)
                      ? *types.begin()
                      : "i64";
    }
    auto at = std::find_if(first, last, [&](const ParamMetadata &p) {
      return slot.tupleIndex < p.tupleIndex;
    });
    m.params.insert(at, std::move(slot));
  }
  m.constexprs = std::move(constexprs);
  return m;
}

/// The descriptor parameters' types, which every variant of one config must
/// share.
std::string descriptorKey(const VariantMetadata &m) {
  std::string key;
  for (const ParamMetadata &p : m.params)
    if (parseDescriptorType(p.type))
      key += p.name + ":" + p.type + ",";
  return key;
}

/// A descriptor parameter's tensor map encoding, for messages.
std::string tensorMapText(const ParamMetadata &p) {
  std::string text = "box [";
  for (auto [i, d] : enumerate(p.tensorMapBox))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "], swizzle " + std::to_string(p.tensorMapSwizzle);
}

/// Makes `into` read the tensor maps `from` reads. The launcher encodes one
/// map per descriptor argument and config, so the variants (and archs) that
/// read it must agree on its encoding; those that read none take any.
Error mergeTensorMaps(VariantMetadata &into, const VariantMetadata &from,
                      const Twine &what) {
  for (auto [mine, theirs] : zip(into.params, from.params)) {
    if (!theirs.readsTensorMap)
      continue;
    if (mine.readsTensorMap &&
        (mine.tensorMapBox != theirs.tensorMapBox ||
         mine.tensorMapSwizzle != theirs.tensorMapSwizzle))
      return makeError(formatv(
          "{0} read the tensor map of {1} encoded differently ({2} vs {3}); "
          "one launch encodes one map per argument",
          what, mine.name, tensorMapText(mine), tensorMapText(theirs)));
    mine.readsTensorMap = true;
    mine.tensorMapBox = theirs.tensorMapBox;
    mine.tensorMapSwizzle = theirs.tensorMapSwizzle;
  }
  return Error::success();
}

/// What identifies a config: constexpr values and launch options.
std::string configKey(const VariantMetadata &m) {
  std::string key = formatv("{0}|{1}|{2}|", m.numWarps, m.numStages, m.numCtas);
  for (const ConstexprMetadata &c : m.constexprs)
    key += c.name + "=" + c.value + ",";
  return key;
}

std::string paramEntry(const ParamMetadata &p) {
  if (p.constexprValue)
    return p.displayName() + "=" + *p.constexprValue;
  return p.displayName() + "=" + p.type +
         (p.equalToOne           ? ":1"
          : p.divisibility == 16 ? ":16"
                                 : "");
}

/// The named signature in source order, recovered from the positional one
/// (whose entries interleave parameter types and constexpr values); params
/// then constexprs when the positional form does not line up.
std::string namedSignature(const VariantMetadata &m) {
  std::vector<StringRef> entries = splitSignatureEntries(m.signature);
  std::vector<std::string> named;
  size_t p = 0, c = 0;
  for (StringRef entry : entries) {
    entry = entry.trim();
    StringRef type = entry.split(':').first.trim();
    if (p < m.params.size() && type == m.params[p].type) {
      named.push_back(paramEntry(m.params[p++]));
    } else if (c < m.constexprs.size() && entry == m.constexprs[c].value) {
      named.push_back(m.constexprs[c].name + "=" + m.constexprs[c].value);
      ++c;
    } else {
      break;
    }
  }
  if (p != m.params.size() || c != m.constexprs.size() ||
      named.size() != entries.size()) {
    named.clear();
    for (const ParamMetadata &param : m.params)
      named.push_back(paramEntry(param));
    for (const ConstexprMetadata &constant : m.constexprs)
      named.push_back(constant.name + "=" + constant.value);
  }
  std::string name = join(named, ", ");
  name += formatv("{0}num_warps={1}, num_stages={2}", named.empty() ? "" : ", ",
                  m.numWarps, m.numStages);
  if (m.numCtas != 1)
    name += formatv(", num_ctas={0}", m.numCtas);
  return name;
}

unsigned alignedCount(const VariantMetadata &m) {
  return count_if(m.params,
                  [](const ParamMetadata &p) { return p.divisibility == 16; });
}

/// How many arguments the variant requires a value of (`:1`, constexpr
/// tuple elements).
unsigned requiredValueCount(const VariantMetadata &m) {
  return count_if(m.params, [](const ParamMetadata &p) {
    return p.requiredValue().has_value();
  });
}

unsigned assumptions(const VariantMetadata &m) {
  return alignedCount(m) + requiredValueCount(m);
}

/// (compute capability number, suffix) of "sm_90a"; unparsable names last.
std::tuple<unsigned, std::string, std::string> archOrder(StringRef arch) {
  StringRef rest = arch;
  unsigned number = ~0u;
  if (rest.consume_front("sm_")) {
    StringRef digits = rest.take_while(isDigit);
    if (!digits.getAsInteger(10, number))
      rest = rest.drop_front(digits.size());
  }
  return {number, rest.str(), arch.str()};
}

} // namespace

bool VariantModel::isAligned() const { return alignedCount(metadata) > 0; }

unsigned VariantModel::assumptionCount() const { return assumptions(metadata); }

bool archLess(StringRef a, StringRef b) { return archOrder(a) < archOrder(b); }

std::string cppKernelName(StringRef name) {
  std::string cpp = name.str();
  std::replace(cpp.begin(), cpp.end(), '.', '_');
  return cpp;
}

std::string describeConfig(const KernelModel &kernel,
                           const ConfigModel &config) {
  std::string s;
  for (auto [name, value] : zip(kernel.constexprNames, config.constexprValues))
    s += name + "=" + value + ", ";
  s += formatv("num_warps={0}, num_stages={1}", config.numWarps,
               config.numStages);
  if (config.numCtas != 1)
    s += formatv(", num_ctas={0}", config.numCtas);
  return s;
}

Expected<std::vector<KernelModel>>
buildLauncherModel(ArrayRef<CompiledVariant> compiled) {
  // Variants of each kernel in order of first appearance, with the origin of
  // each image for duplicate reports.
  struct PendingVariant {
    VariantModel model;
    std::map<std::pair<std::string, bool>, std::string> originByImage;
    std::string firstOrigin;
  };
  struct PendingKernel {
    std::string name;
    std::vector<PendingVariant> variants;
    std::map<std::string, unsigned> variantByKey;
    std::string firstOrigin;
    std::optional<std::vector<std::string>> autotuneKey;
    std::string keyOrigin;
  };
  std::vector<PendingKernel> kernels;
  std::map<std::string, unsigned> kernelByName;

  for (const CompiledVariant &input : compiled) {
    Expected<VariantMetadata> slotted =
        withTupleSlots(input.metadata, input.origin);
    if (!slotted)
      return slotted.takeError();
    const VariantMetadata &m = *slotted;
    if (input.cubin.empty())
      return makeError(input.origin + (input.isPtx ? ": the PTX is empty"
                                                   : ": the cubin is empty"));
    auto [kernelIt, newKernel] =
        kernelByName.try_emplace(m.kernel, kernels.size());
    if (newKernel)
      kernels.push_back(PendingKernel{m.kernel, {}, {}, input.origin, {}, {}});
    PendingKernel &kernel = kernels[kernelIt->second];
    if (input.autotuneKey) {
      if (kernel.autotuneKey && *kernel.autotuneKey != *input.autotuneKey)
        return makeError(formatv(
            "{0}: kernel {1} has the autotune key [{2}], but {3} gave [{4}]",
            input.origin, m.kernel, join(*input.autotuneKey, ", "),
            kernel.keyOrigin, join(*kernel.autotuneKey, ", ")));
      if (!kernel.autotuneKey) {
        kernel.autotuneKey = input.autotuneKey;
        kernel.keyOrigin = input.origin;
      }
    }

    auto [variantIt, newVariant] =
        kernel.variantByKey.try_emplace(variantKey(m), kernel.variants.size());
    if (newVariant) {
      PendingVariant pending;
      pending.model.metadata = m;
      pending.model.displayName = namedSignature(m);
      pending.firstOrigin = input.origin;
      kernel.variants.push_back(std::move(pending));
    }
    PendingVariant &variant = kernel.variants[variantIt->second];
    // One launcher passes the same arguments whatever image the device
    // loads, so every arch's entry point must take the same parameters.
    if (m.globalScratchBytes.has_value() !=
        variant.model.metadata.globalScratchBytes.has_value())
      return makeError(formatv(
          "{0}: kernel {1}, variant [{2}]: the {3} image {4} \"global_scratch_"
          "bytes\" but {5} {6}; every image of a variant must take the hidden "
          "global scratch parameter, or none (write \"global_scratch_bytes\": "
          "0 for an arch that uses no scratch)",
          input.origin, m.kernel, variant.model.displayName, m.arch,
          m.globalScratchBytes ? "has" : "lacks", variant.firstOrigin,
          m.globalScratchBytes ? "lacks it" : "has it"));
    if (Error error = mergeTensorMaps(
            variant.model.metadata, m,
            formatv("{0}: kernel {1}, variant [{2}]: its images for {3} and "
                    "earlier archs",
                    input.origin, m.kernel, variant.model.displayName, m.arch)))
      return error;
    auto [originIt, newImage] = variant.originByImage.try_emplace(
        std::make_pair(m.arch, input.isPtx), input.origin);
    if (!newImage && any_of(variant.model.images, [&](const ImageModel &i) {
          return i.arch == m.arch && i.isPtx == input.isPtx &&
                 i.bytes == input.cubin;
        }))
      continue; // the same image again
    if (!newImage)
      return makeError(formatv("{0}: kernel {1}, variant [{2}] is given twice "
                               "for {3}{4} (also by {5})",
                               input.origin, m.kernel,
                               variant.model.displayName, m.arch,
                               input.isPtx ? " as PTX" : "", originIt->second));
    variant.model.images.push_back(
        ImageModel{m.arch, input.cubin, m.registers, m.spills, m.sharedBytes,
                   m.globalScratchBytes.value_or(0), input.isPtx, input.path,
                   m.producerWarps, m.launchWarps});
  }

  // Every generated name starts with the kernel's C++ name, so two kernels
  // of one target must not share it ("A_B.f" and "A.B_f").
  std::map<std::string, const PendingKernel *> kernelByCppName;
  for (const PendingKernel &pending : kernels) {
    auto [it, inserted] =
        kernelByCppName.try_emplace(cppKernelName(pending.name), &pending);
    if (!inserted)
      return makeError(formatv(
          "{0}: kernels {1} (from {2}) and {3} would both be named {4} in "
          "C++ (launch_{4}, {4}_config, {4}_info); give them names whose dots "
          "and underscores do not coincide, or build them in separate targets",
          pending.firstOrigin, it->second->name, it->second->firstOrigin,
          pending.name, it->first));
  }

  std::vector<KernelModel> result;
  for (PendingKernel &pending : kernels) {
    KernelModel kernel;
    kernel.name = pending.name;
    kernel.cppName = cppKernelName(pending.name);
    kernel.autotuneKey = pending.autotuneKey;
    const VariantMetadata &first = pending.variants.front().model.metadata;
    for (const ConstexprMetadata &c : first.constexprs)
      kernel.constexprNames.push_back(c.name);

    // Configs in order of first appearance.
    std::map<std::string, unsigned> configByKey;
    for (PendingVariant &variant : pending.variants) {
      const VariantMetadata &m = variant.model.metadata;
      std::vector<std::string> names;
      for (const ConstexprMetadata &c : m.constexprs)
        names.push_back(c.name);
      if (names != kernel.constexprNames)
        return makeError(formatv(
            "kernel {0}: variants [{1}] and [{2}] have different constexpr "
            "parameters ({3} vs {4}); are they the same kernel?",
            kernel.name, pending.variants.front().model.displayName,
            variant.model.displayName, join(kernel.constexprNames, ", "),
            join(names, ", ")));
      auto [it, inserted] =
          configByKey.try_emplace(configKey(m), kernel.configs.size());
      if (inserted) {
        ConfigModel config;
        for (const ConstexprMetadata &c : m.constexprs)
          config.constexprValues.push_back(c.value);
        config.numWarps = m.numWarps;
        config.numStages = m.numStages;
        config.numCtas = m.numCtas;
        kernel.configs.push_back(std::move(config));
      }
      variant.model.config = it->second;
    }

    // Group the variants into overloads by parameter types, then by config.
    std::vector<std::vector<std::vector<unsigned>>> groups;
    std::vector<std::vector<unsigned>> groupConfigs;
    std::map<std::string, unsigned> groupByTypes;
    for (auto [index, variant] : enumerate(pending.variants)) {
      auto [it, inserted] = groupByTypes.try_emplace(
          overloadKey(variant.model.metadata), groups.size());
      if (inserted) {
        groups.emplace_back();
        groupConfigs.emplace_back();
      }
      std::vector<unsigned> &configs = groupConfigs[it->second];
      auto at = find(configs, variant.model.config);
      if (at == configs.end()) {
        configs.push_back(variant.model.config);
        groups[it->second].emplace_back();
        at = configs.end() - 1;
      }
      groups[it->second][at - configs.begin()].push_back(index);
    }

    for (auto [group, configs] : zip(groups, groupConfigs)) {
      OverloadModel overload;
      for (auto [variants, config] : zip(group, configs)) {
        const VariantModel &head = pending.variants[variants.front()].model;
        for (unsigned index : variants) {
          const VariantModel &other = pending.variants[index].model;
          if (other.metadata.entry != head.metadata.entry)
            return makeError(formatv(
                "kernel {0}: variants [{1}] and [{2}] take the same parameter "
                "types and config but name different entry points ({3} vs "
                "{4})",
                kernel.name, head.displayName, other.displayName,
                head.metadata.entry, other.metadata.entry));
          if (descriptorKey(other.metadata) != descriptorKey(head.metadata))
            return makeError(formatv(
                "kernel {0}: variants [{1}] and [{2}] have the same config "
                "but different descriptor block shapes; the launcher cannot "
                "tell them apart (give them different constexpr values, e.g. "
                "the block sizes)",
                kernel.name, head.displayName, other.displayName));
        }
        // Every variant of the config carries the maps any of them reads:
        // the launcher encodes them once, before choosing the variant.
        VariantMetadata maps = head.metadata;
        for (unsigned index : variants)
          if (Error error = mergeTensorMaps(
                  maps, pending.variants[index].model.metadata,
                  formatv("kernel {0}: variants [{1}] and [{2}], of one "
                          "config,",
                          kernel.name, head.displayName,
                          pending.variants[index].model.displayName)))
            return error;
        for (unsigned index : variants)
          cantFail(mergeTensorMaps(pending.variants[index].model.metadata, maps,
                                   ""));
        // Most assumptions first, required values (arguments equal to 1)
        // breaking ties; the general variant (none) last.
        std::stable_sort(
            variants.begin(), variants.end(), [&](unsigned a, unsigned b) {
              const VariantMetadata &ma = pending.variants[a].model.metadata;
              const VariantMetadata &mb = pending.variants[b].model.metadata;
              return std::make_pair(assumptions(ma), requiredValueCount(ma)) >
                     std::make_pair(assumptions(mb), requiredValueCount(mb));
            });
        OverloadConfigModel entry;
        entry.config = config;
        for (unsigned i = 0, e = head.metadata.params.size(); i < e; ++i) {
          std::optional<std::string> value =
              head.metadata.params[i].requiredValue();
          if (value && all_of(variants, [&](unsigned index) {
                return pending.variants[index]
                           .model.metadata.params[i]
                           .requiredValue() == value;
              }))
            entry.requiredValues.push_back(i);
        }
        for (unsigned index : variants) {
          VariantModel &variant = pending.variants[index].model;
          std::stable_sort(variant.images.begin(), variant.images.end(),
                           [](const ImageModel &a, const ImageModel &b) {
                             if (a.isPtx != b.isPtx)
                               return !a.isPtx;
                             return archLess(a.arch, b.arch);
                           });
          entry.variants.push_back(kernel.variants.size());
          kernel.variants.push_back(std::move(variant));
        }
        entry.hasGeneralVariant = kernel.variants.back().assumptionCount() ==
                                  entry.requiredValues.size();
        overload.configs.push_back(std::move(entry));
      }
      kernel.overloads.push_back(std::move(overload));
    }
    result.push_back(std::move(kernel));
  }
  return result;
}

} // namespace kiln::codegen
