//===- LauncherModel.cpp - Variants grouped into kernels and overloads ----===//

#include "LauncherModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
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
  for (const ParamMetadata &p : m.params)
    key += formatv("{0}:{1}:{2},", p.name, p.type, p.divisibility).str();
  key += "|";
  for (const ConstexprMetadata &c : m.constexprs)
    key += c.name + "=" + c.value + ",";
  return key;
}

/// What identifies an overload: the parameter types.
std::string overloadKey(const VariantMetadata &m) {
  std::string key;
  for (const ParamMetadata &p : m.params)
    key += p.type + ",";
  return key;
}

/// What must agree between the variants of one overload.
std::string configKey(const VariantMetadata &m) {
  std::string key =
      formatv("{0}|{1}|{2}|{3}|", m.entry, m.numWarps, m.numStages, m.numCtas);
  for (const ConstexprMetadata &c : m.constexprs)
    key += c.name + "=" + c.value + ",";
  return key;
}

std::string describeConfig(const VariantMetadata &m) {
  std::string s;
  for (const ConstexprMetadata &c : m.constexprs)
    s += c.name + "=" + c.value + ", ";
  s += formatv("num_warps={0}, num_stages={1}, num_ctas={2}", m.numWarps,
               m.numStages, m.numCtas);
  if (m.entry != m.kernel)
    s += ", entry " + m.entry;
  return s;
}

std::string paramEntry(const ParamMetadata &p) {
  return p.name + "=" + p.type + (p.divisibility == 16 ? ":16" : "");
}

/// The named signature in source order, recovered from the positional one
/// (whose entries interleave parameter types and constexpr values); params
/// then constexprs when the positional form does not line up.
std::string namedSignature(const VariantMetadata &m) {
  SmallVector<StringRef> entries;
  StringRef(m.signature).split(entries, ',', -1, /*KeepEmpty=*/false);
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

unsigned assumptions(const VariantMetadata &m) {
  return count_if(m.params,
                  [](const ParamMetadata &p) { return p.divisibility == 16; });
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

bool VariantModel::isAligned() const { return assumptions(metadata) > 0; }

bool archLess(StringRef a, StringRef b) { return archOrder(a) < archOrder(b); }

Expected<std::vector<KernelModel>>
buildLauncherModel(ArrayRef<CompiledVariant> compiled) {
  // Variants of each kernel in order of first appearance, with the origin of
  // each image for duplicate reports.
  struct PendingVariant {
    VariantModel model;
    std::map<std::string, std::string> originByArch;
  };
  struct PendingKernel {
    std::string name;
    std::vector<PendingVariant> variants;
    std::map<std::string, unsigned> variantByKey;
  };
  std::vector<PendingKernel> kernels;
  std::map<std::string, unsigned> kernelByName;

  for (const CompiledVariant &input : compiled) {
    const VariantMetadata &m = input.metadata;
    if (input.cubin.empty())
      return makeError(input.origin + ": the cubin is empty");
    auto [kernelIt, newKernel] =
        kernelByName.try_emplace(m.kernel, kernels.size());
    if (newKernel)
      kernels.push_back(PendingKernel{m.kernel, {}, {}});
    PendingKernel &kernel = kernels[kernelIt->second];

    auto [variantIt, newVariant] =
        kernel.variantByKey.try_emplace(variantKey(m), kernel.variants.size());
    if (newVariant) {
      PendingVariant pending;
      pending.model.metadata = m;
      pending.model.displayName = namedSignature(m);
      kernel.variants.push_back(std::move(pending));
    }
    PendingVariant &variant = kernel.variants[variantIt->second];
    auto [originIt, newArch] =
        variant.originByArch.try_emplace(m.arch, input.origin);
    if (!newArch)
      return makeError(formatv("{0}: kernel {1}, variant [{2}] is given twice "
                               "for {3} (also by {4})",
                               input.origin, m.kernel,
                               variant.model.displayName, m.arch,
                               originIt->second));
    variant.model.images.push_back(
        ImageModel{m.arch, input.cubin, m.registers, m.spills, m.sharedBytes});
  }

  std::vector<KernelModel> result;
  for (PendingKernel &pending : kernels) {
    // Group the variants into overloads by parameter types.
    std::vector<std::vector<unsigned>> groups;
    std::map<std::string, unsigned> groupByTypes;
    for (auto [index, variant] : enumerate(pending.variants)) {
      auto [it, inserted] = groupByTypes.try_emplace(
          overloadKey(variant.model.metadata), groups.size());
      if (inserted)
        groups.emplace_back();
      groups[it->second].push_back(index);
    }

    KernelModel kernel;
    kernel.name = pending.name;
    for (std::vector<unsigned> &group : groups) {
      const VariantModel &first = pending.variants[group.front()].model;
      for (unsigned index : group) {
        const VariantModel &other = pending.variants[index].model;
        if (configKey(other.metadata) == configKey(first.metadata))
          continue;
        SmallVector<std::string> types;
        for (const ParamMetadata &p : first.metadata.params)
          types.push_back(p.type);
        return makeError(formatv(
            "kernel {0}: variants [{1}] and [{2}] take the same parameter "
            "types ({3}) but differ in constexpr values or launch options "
            "({4} vs {5}); one launcher cannot choose between them yet "
            "(per-call configs are planned): keep one specialization per "
            "tuple of parameter types",
            kernel.name, first.displayName, other.displayName,
            join(types, ", "), describeConfig(first.metadata),
            describeConfig(other.metadata)));
      }
      // Most assumptions first; the general variant (none) last.
      std::stable_sort(group.begin(), group.end(), [&](unsigned a, unsigned b) {
        return assumptions(pending.variants[a].model.metadata) >
               assumptions(pending.variants[b].model.metadata);
      });
      OverloadModel overload;
      for (unsigned index : group) {
        VariantModel &variant = pending.variants[index].model;
        std::stable_sort(variant.images.begin(), variant.images.end(),
                         [](const ImageModel &a, const ImageModel &b) {
                           return archLess(a.arch, b.arch);
                         });
        overload.variants.push_back(kernel.variants.size());
        kernel.variants.push_back(std::move(variant));
      }
      overload.hasGeneralVariant = !kernel.variants.back().isAligned();
      kernel.overloads.push_back(std::move(overload));
    }
    result.push_back(std::move(kernel));
  }
  return result;
}

} // namespace kiln::codegen
