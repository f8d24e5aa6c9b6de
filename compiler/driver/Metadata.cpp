//===- Metadata.cpp - the JSON description of one compiled variant --------===//
#include "compiler/driver/Metadata.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Regex.h"

using namespace llvm;

/// The sum of the numbers that `pattern`'s first group matches in ptxas's
/// -v report (one line per function; kernels rarely have more than one).
static int64_t sumInLog(StringRef log, StringRef pattern) {
  Regex regex(pattern);
  int64_t sum = 0;
  SmallVector<StringRef> groups;
  while (regex.match(log, &groups)) {
    unsigned n = 0;
    if (!groups[1].getAsInteger(10, n))
      sum += n;
    log = log.substr(groups[0].end() - log.begin());
  }
  return sum;
}

/// "tuple_index": where an element of a tuple parameter is (outermost
/// first); absent for a parameter of its own.
static void writeTupleIndex(json::OStream &j,
                            const kiln::frontend::ParamSpec &p) {
  if (p.tupleIndex.empty())
    return;
  j.attributeArray("tuple_index", [&] {
    for (unsigned i : p.tupleIndex)
      j.value(int64_t(i));
  });
}

std::string kiln::compilerVersion(StringRef ptxasVersion) {
  std::string version = std::string("kilnc 0.1.0 (LLVM ") + LLVM_VERSION_STRING;
  if (!ptxasVersion.empty())
    version += (", ptxas " + ptxasVersion).str();
  return version + ")";
}

void kiln::writeMetadata(raw_ostream &os, const VariantMetadata &m) {
  json::OStream j(os, /*IndentSize=*/2);
  const frontend::KernelSpec &spec = *m.spec;
  j.object([&] {
    j.attribute("kernel", m.kernel);
    j.attribute("entry", m.entry);
    j.attribute("arch", m.arch);
    j.attribute("signature", spec.str());
    j.attribute("num_warps", int64_t(spec.numWarps));
    j.attribute("num_stages", int64_t(spec.numStages));
    j.attribute("num_ctas", int64_t(spec.numCtas));
    j.attribute("shared_bytes", int64_t(m.dynamicSharedBytes));
    j.attribute("static_shared_bytes", int64_t(m.cubin->staticSharedBytes));
    if (m.globalScratchBytes)
      j.attribute("global_scratch_bytes", *m.globalScratchBytes);
    if (m.producerWarps)
      j.attribute("producer_warps", int64_t(m.producerWarps));
    if (m.launchWarps)
      j.attribute("launch_warps", int64_t(m.launchWarps));
    j.attribute("registers", int64_t(m.cubin->registers));
    j.attribute("spills", int64_t(m.cubin->spillBytes));
    j.attribute("spill_stores",
                sumInLog(m.cubin->log, "([0-9]+) bytes spill stores"));
    j.attribute("spill_loads",
                sumInLog(m.cubin->log, "([0-9]+) bytes spill loads"));
    j.attributeArray("params", [&] {
      for (const frontend::ParamSpec *leaf : spec.leaves()) {
        const frontend::ParamSpec &p = *leaf;
        if (p.isConstexpr)
          continue;
        j.object([&] {
          j.attribute("name", p.name);
          writeTupleIndex(j, p);
          j.attribute("type", p.type.str());
          j.attribute("divisibility", int64_t(p.divisibility));
          if (p.equalToOne)
            j.attribute("equal_to_1", true);
          auto map = m.tensorMaps.find(p.name);
          if (map != m.tensorMaps.end())
            j.attributeObject("tensor_map", [&] {
              j.attributeArray("box", [&] {
                for (int64_t extent : map->second.box)
                  j.value(extent);
              });
              j.attribute("swizzle", int64_t(map->second.swizzle));
            });
        });
      }
    });
    j.attributeArray("constexprs", [&] {
      for (const frontend::ParamSpec *leaf : spec.leaves()) {
        const frontend::ParamSpec &p = *leaf;
        if (!p.isConstexpr)
          continue;
        j.object([&] {
          j.attribute("name", p.name);
          writeTupleIndex(j, p);
          j.attribute("value", p.value.text);
        });
      }
    });
    j.attribute("source_hash", m.sourceHash);
    j.attribute("compiler", compilerVersion(m.ptxasVersion));
  });
  os << "\n";
}

Error kiln::printResourceUsage(raw_ostream &os, StringRef text,
                               StringRef origin) {
  auto fail = [&](const Twine &message) {
    return createStringError(inconvertibleErrorCode(),
                             (origin + ": " + message).str());
  };
  Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail("invalid JSON: " + toString(parsed.takeError()));
  const json::Object *m = parsed->getAsObject();
  if (!m)
    return fail("expected a JSON object");
  auto number = [&](StringRef key) { return m->getInteger(key).value_or(0); };
  auto string = [&](StringRef key) {
    return m->getString(key).value_or("").str();
  };
  os << formatv("{0} for {1} [{2}; num_warps={3}, num_stages={4}]: {5} "
                "registers, {6} bytes spill stores, {7} bytes spill loads, "
                "{8} bytes static shared memory, {9} bytes dynamic shared "
                "memory\n",
                string("kernel"), string("arch"), string("signature"),
                number("num_warps"), number("num_stages"), number("registers"),
                number("spill_stores"), number("spill_loads"),
                number("static_shared_bytes"), number("shared_bytes"));
  return Error::success();
}
