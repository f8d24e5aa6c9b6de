// The shape spec that kiln-tune reads: which kernel to tune, over which
// shapes, and how to make every argument of a launch from a shape.
//
//   {"kernels": [{
//     "kernel": "matmul_kernel",
//     "types": "*fp16, *fp16, *fp16, i32, ...",   // optional: the overload;
//                                                   // default the first
//     "grid": ["cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)"],
//     "args": {
//       "a_ptr": {"elements": "M * K"},            // random in [-1, 1)
//       "b_ptr": {"elements": "K * N", "init": "random"},
//       "c_ptr": {"elements": "M * N", "output": true},
//       "M": "M", "N": "N", "K": "K",
//       "stride_am": "K", "stride_ak": 1, ...
//     },
//     "shapes": [{"M": 4096, "N": 4096, "K": 4096}, {"M": 16, "N": 4096,
//                "K": 4096}],
//     "rtol": 0.01, "atol": 0.01                  // optional
//   }]}
//
// Every non-constexpr parameter of the kernel needs an entry in "args": a
// buffer ({"elements": EXPR, "init": "random" | "zeros" | "ones", "output":
// bool}) for a pointer, an integer expression or a number for a scalar. A
// tuple parameter's elements are named as ParamInfo names them,
// "stride[0]", "stride[1]", ...; a constexpr element may be left out (it
// gets the value it was compiled with).
// Expressions (kiln/tune/expression.h) see the shape's names; "grid" (one to
// three expressions) also sees the config's constexprs and num_warps,
// num_stages, num_ctas, as upstream's `grid = lambda meta: ...` does.
// Outputs start zeroed and are compared between configs.

#ifndef KILN_TUNE_SPEC_H_
#define KILN_TUNE_SPEC_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace tune {

struct ArgSpec {
  // A buffer (for a pointer parameter) or a scalar.
  bool buffer = false;
  // Buffers: the element count, how to fill inputs, whether it is an output.
  std::string elements;
  std::string init = "random";
  bool output = false;
  // Scalars: an integer expression, or a number (floats).
  std::string expression;
  bool is_number = false;
  double number = 0;
};

struct KernelSpec {
  std::string kernel;
  std::string types; // empty: the first overload
  std::vector<std::string> grid;
  std::map<std::string, ArgSpec> args;
  // Each shape's names and values, in the file's order.
  std::vector<std::vector<std::pair<std::string, int64_t>>> shapes;
  // Negative: the default for the output's element type.
  double rtol = -1;
  double atol = -1;
};

// Parses a spec; errors name `origin`, the line and the field.
absl::StatusOr<std::vector<KernelSpec>> ParseTuneSpec(absl::string_view json,
                                                      absl::string_view origin);

} // namespace tune
} // namespace kiln

#endif // KILN_TUNE_SPEC_H_
