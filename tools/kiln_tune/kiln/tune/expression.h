// Integer expressions of a kiln-tune shape spec: argument sizes and launch
// grids written as Python would write them ("cdiv(M, BLOCK_SIZE_M) *
// cdiv(N, BLOCK_SIZE_N)", "M * K", "next_power_of_2(n_cols)").

#ifndef KILN_TUNE_EXPRESSION_H_
#define KILN_TUNE_EXPRESSION_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace tune {

// Evaluates `text` over 64-bit integers: literals, names bound in
// `variables`, + - * // % (floor division and modulo, as Python's), unary
// minus, parentheses and the functions cdiv(a, b), next_power_of_2(a),
// min(a, ...), max(a, ...). An InvalidArgument error quotes the expression
// and says what is wrong (an unknown name lists the known ones).
absl::StatusOr<int64_t>
EvaluateExpression(absl::string_view text,
                   const std::map<std::string, int64_t> &variables);

} // namespace tune
} // namespace kiln

#endif // KILN_TUNE_EXPRESSION_H_
