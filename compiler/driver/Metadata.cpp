//===- Metadata.cpp - the JSON description of one compiled variant --------===//
#include "compiler/driver/Metadata.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/JSON.h"

using namespace llvm;

std::string kiln::compilerVersion() {
  return std::string("kilnc 0.1.0 (LLVM ") + LLVM_VERSION_STRING + ")";
}

void kiln::writeMetadata(raw_ostream &os, const VariantMetadata &m) {
  json::OStream j(os, /*IndentSize=*/2);
  const frontend::KernelSpec &spec = *m.spec;
  j.object([&] {
    j.attribute("kernel", m.kernel);
    j.attribute("entry", m.kernel);
    j.attribute("arch", m.arch);
    j.attribute("signature", spec.str());
    j.attribute("num_warps", int64_t(spec.numWarps));
    j.attribute("num_stages", int64_t(spec.numStages));
    j.attribute("num_ctas", int64_t(spec.numCtas));
    j.attribute("shared_bytes", int64_t(m.dynamicSharedBytes));
    j.attribute("static_shared_bytes", int64_t(m.cubin->staticSharedBytes));
    j.attribute("registers", int64_t(m.cubin->registers));
    j.attribute("spills", int64_t(m.cubin->spillBytes));
    j.attributeArray("params", [&] {
      for (const frontend::ParamSpec &p : spec.params) {
        if (p.isConstexpr)
          continue;
        j.object([&] {
          j.attribute("name", p.name);
          j.attribute("type", p.type.str());
          j.attribute("divisibility", int64_t(p.divisibility));
          if (p.equalToOne)
            j.attribute("equal_to_1", true);
        });
      }
    });
    j.attributeArray("constexprs", [&] {
      for (const frontend::ParamSpec &p : spec.params) {
        if (!p.isConstexpr)
          continue;
        j.object([&] {
          j.attribute("name", p.name);
          j.attribute("value", p.value.text);
        });
      }
    });
    j.attribute("source_hash", m.sourceHash);
    j.attribute("compiler", compilerVersion());
  });
  os << "\n";
}
