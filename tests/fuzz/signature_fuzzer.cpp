//===- signature_fuzzer.cpp - libFuzzer target over kilnc's -s parser -----===//
//
// Input: a parameter list on the first line, the signature after it. The
// parameter list is comma-separated names; a name ending in '!' is a
// tl.constexpr, one ending in '?' a @triton.heuristics key, and `NAME!=TEXT`
// gives a constexpr its default (parsed as kilnc parses defaults). The rest
// of the input is the `-s` text, parsed once plain and once with --aligned.
//
// Findings: crashes and sanitizer reports in parseSignature, splitSignature,
// parseConstexprLiteral and withEqualToOne, and two properties of an
// accepted signature:
// - the spec's positional form (KernelSpec::str(), what the metadata records)
//   parses back to the same parameters (types, hints, values);
// - retyping its integer run-time parameters `:1` (withEqualToOne, what
//   --unit-strides does) gives a signature that parses, with those
//   parameters equal to 1 and nothing else changed.
// Rejected input is fine. scripts/fuzz.sh builds and runs it.
//
//===----------------------------------------------------------------------===//
#include "compiler/frontend/Signature.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace kiln::frontend;

namespace {

[[noreturn]] void finding(const std::string &what, llvm::StringRef params,
                          llvm::StringRef signature, const std::string &detail) {
  llvm::errs() << "signature_fuzzer: " << what << "\n  params: " << params
               << "\n  signature: " << signature << "\n  " << detail << "\n";
  __builtin_trap();
}

std::vector<ParamDecl> readParams(llvm::StringRef line) {
  std::vector<ParamDecl> decls;
  llvm::SmallVector<llvm::StringRef> parts;
  line.split(parts, ',', /*MaxSplit=*/16, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) {
    auto [name, def] = part.split('=');
    name = name.trim();
    ParamDecl d;
    d.isConstexpr = name.consume_back("!");
    d.fromHeuristic = name.consume_back("?");
    d.name = name.str();
    if (d.isConstexpr && part.contains('='))
      d.defaultValue = parseConstexprLiteral(def.trim());
    decls.push_back(std::move(d));
  }
  return decls;
}

/// The fields of a parameter that the positional form keeps.
std::string describe(const ParamSpec &p) {
  std::string s = p.name + (p.isConstexpr ? " constexpr " : " ");
  if (p.isConstexpr)
    return s + std::to_string(static_cast<int>(p.value.kind)) + ":" +
           p.value.text;
  return s + p.type.str() + " div" + std::to_string(p.divisibility) +
         (p.equalToOne ? " ==1" : "");
}

void check(llvm::StringRef paramLine, llvm::StringRef signature, bool aligned) {
  std::vector<ParamDecl> decls = readParams(paramLine);
  for (llvm::StringRef entry : splitSignature(signature))
    (void)parseConstexprLiteral(entry);
  auto spec = parseSignature(signature, decls, aligned);
  if (!spec) {
    std::string message = llvm::toString(spec.takeError());
    if (message.empty())
      finding("rejected without a message", paramLine, signature, "");
    return;
  }
  if (spec->params.size() != decls.size())
    finding("spec has " + std::to_string(spec->params.size()) +
                " parameters for " + std::to_string(decls.size()),
            paramLine, signature, "");
  bool pending = false;
  for (const ParamSpec &p : spec->params)
    pending |= p.pendingHeuristic;
  if (pending)
    return; // the positional form cannot leave a parameter out

  // The positional form parses back to the same parameters.
  std::string positional = spec->str();
  auto again = parseSignature(positional, decls, /*aligned=*/false);
  if (!again)
    finding("positional form rejected", paramLine, signature,
            positional + ": " + llvm::toString(again.takeError()));
  for (size_t i = 0; i < spec->params.size(); ++i)
    if (describe(spec->params[i]) != describe(again->params[i]))
      finding("positional form differs", paramLine, signature,
              positional + ": " + describe(spec->params[i]) + " became " +
                  describe(again->params[i]));

  // Integer run-time parameters (i8..i64, u8..u64) retyped `:1`.
  std::vector<std::string> ints;
  for (const ParamSpec &p : spec->params)
    if (!p.isConstexpr && !p.equalToOne && !p.isTuple && !p.type.isPointer &&
        !p.type.isTensorDescriptor() && !p.type.isBlock() &&
        p.type.str() != "i1" && p.type.str() != "u1" && !p.type.str().empty() &&
        (p.type.str()[0] == 'i' || p.type.str()[0] == 'u'))
      ints.push_back(p.name);
  if (ints.empty())
    return;
  std::string unit = withEqualToOne(signature, decls, ints);
  auto retyped = parseSignature(unit, decls, aligned);
  if (!retyped)
    finding("withEqualToOne's signature rejected", paramLine, signature,
            unit + ": " + llvm::toString(retyped.takeError()));
  for (size_t i = 0; i < spec->params.size(); ++i) {
    const ParamSpec &before = spec->params[i], &after = retyped->params[i];
    // Retyped, or `:1` already (withEqualToOne leaves those as they are).
    bool wanted = before.equalToOne || llvm::is_contained(ints, before.name);
    if (wanted != after.equalToOne || before.isConstexpr != after.isConstexpr ||
        (!before.isConstexpr && before.type.str() != after.type.str()))
      finding("withEqualToOne changed the wrong parameter", paramLine, signature,
              unit + ": " + describe(before) + " became " + describe(after));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [params, signature] = input.split('\n');
  check(params, signature, /*aligned=*/false);
  check(params, signature, /*aligned=*/true);
  return 0;
}
