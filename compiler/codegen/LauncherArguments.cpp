//===- LauncherArguments.cpp - The arguments a generated launcher takes ---===//

#include "LauncherArguments.h"

#include "TritonTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace kiln::codegen {

/// Sets `argument`'s types for the (sub)tuple whose elements are `leaves`
/// (consecutive params of one tuple, all sharing the first `depth`
/// positions): its C++ type in `cppType`, its Triton type in `tritonType`.
static void setTupleTypes(const VariantMetadata &m, ArrayRef<unsigned> leaves,
                          size_t depth, std::string &cppType,
                          std::string &tritonType) {
  std::vector<std::string> cppElements, tritonElements;
  bool allLeaves = true;
  for (size_t i = 0; i < leaves.size();) {
    const ParamMetadata &first = m.params[leaves[i]];
    int64_t position = first.tupleIndex[depth];
    size_t end = i + 1;
    while (end < leaves.size() &&
           m.params[leaves[end]].tupleIndex[depth] == position)
      ++end;
    if (first.tupleIndex.size() == depth + 1) {
      cppElements.push_back(*cppTypeFor(first.type));
      tritonElements.push_back(first.type);
    } else {
      cppElements.emplace_back();
      tritonElements.emplace_back();
      setTupleTypes(m, leaves.slice(i, end - i), depth + 1, cppElements.back(),
                    tritonElements.back());
      allLeaves = false;
    }
    i = end;
  }
  cppType = allLeaves && all_equal(cppElements)
                ? "std::array<" + cppElements.front() + ", " +
                      std::to_string(cppElements.size()) + ">"
                : "std::tuple<" + join(cppElements, ", ") + ">";
  tritonType = "(" + join(tritonElements, ", ") +
               (tritonElements.size() == 1 ? ",)" : ")");
}

std::vector<LauncherArgument> launcherArguments(const VariantMetadata &m) {
  std::vector<LauncherArgument> arguments;
  for (auto [i, p] : enumerate(m.params)) {
    bool continues = !p.tupleIndex.empty() && !arguments.empty() &&
                     arguments.back().isTuple &&
                     arguments.back().name == p.name;
    if (!continues) {
      LauncherArgument argument;
      argument.name = p.name;
      argument.isTuple = !p.tupleIndex.empty();
      arguments.push_back(std::move(argument));
    }
    arguments.back().params.push_back(unsigned(i));
  }
  for (LauncherArgument &argument : arguments) {
    if (argument.isTuple) {
      setTupleTypes(m, argument.params, /*depth=*/0, argument.cppType,
                    argument.tritonType);
      continue;
    }
    argument.tritonType = m.params[argument.params[0]].type;
    argument.cppType = *cppTypeFor(argument.tritonType);
  }
  return arguments;
}

std::string elementExpression(StringRef argument,
                              ArrayRef<int64_t> tupleIndex) {
  std::string expression = argument.str();
  for (int64_t i : tupleIndex)
    expression = "std::get<" + std::to_string(i) + ">(" + expression + ")";
  return expression;
}

} // namespace kiln::codegen
