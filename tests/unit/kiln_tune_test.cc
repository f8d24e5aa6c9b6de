// kiln-tune's CPU side: expressions, the shape spec, and the checks of a
// spec against a kernel that run before any GPU work.

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/device.h"
#include "kiln/internal/tuning_cache.h"
#include "kiln/kernel_info.h"
#include "kiln/tune/expression.h"
#include "kiln/tune/spec.h"
#include "kiln/tune/tune_main.h"
#include "kiln/tuning.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::tune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int64_t Eval(const std::string &text,
             const std::map<std::string, int64_t> &vars = {}) {
  absl::StatusOr<int64_t> v = EvaluateExpression(text, vars);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : -12345;
}

std::string EvalError(const std::string &text,
                      const std::map<std::string, int64_t> &vars = {}) {
  absl::StatusOr<int64_t> v = EvaluateExpression(text, vars);
  return v.ok() ? "no error" : std::string(v.status().message());
}

TEST(Expression, ArithmeticAsPython) {
  std::map<std::string, int64_t> vars = {
      {"M", 1000}, {"BLOCK_SIZE_M", 128}, {"N", 4096}, {"BLOCK_SIZE_N", 256}};
  EXPECT_EQ(Eval("cdiv(M, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N)", vars),
            8 * 16);
  EXPECT_EQ(Eval("M * 2 + 3 - 1", vars), 2002);
  EXPECT_EQ(Eval("-7 // 2"), -4); // floor, as Python
  EXPECT_EQ(Eval("-7 % 3"), 2);
  EXPECT_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(Eval("next_power_of_2(1000)"), 1024);
  EXPECT_EQ(Eval("next_power_of_2(1024)"), 1024);
  EXPECT_EQ(Eval("min(3, 1, 2) + max(4, 9)"), 10);
}

TEST(Expression, ErrorsSayWhat) {
  EXPECT_THAT(EvalError("M * K", {{"M", 1}}),
              HasSubstr("unknown name 'K'; known: M"));
  EXPECT_THAT(EvalError("M / 2", {{"M", 1}}), HasSubstr("write '//'"));
  EXPECT_THAT(EvalError("1 // 0"), HasSubstr("division by zero"));
  EXPECT_THAT(EvalError("cdiv(1)"), HasSubstr("cdiv takes two arguments"));
  EXPECT_THAT(EvalError("pow(2, 3)"), HasSubstr("unknown function 'pow'"));
  EXPECT_THAT(EvalError("(1 + 2"), HasSubstr("expected ')'"));
}

constexpr char kSpec[] = R"json({"kernels": [{
  "kernel": "tuned_saxpy",
  "grid": ["cdiv(n, BLOCK)"],
  "args": {"x_ptr": {"elements": "n"}, "y_ptr": {"elements": "n", "init": "ones"},
           "out_ptr": {"elements": "n", "output": true},
           "alpha": 2.5, "n": "n"},
  "shapes": [{"n": 4096}, {"n": 1048576}],
  "rtol": 0.001
}]})json";

TEST(Spec, Parses) {
  absl::StatusOr<std::vector<KernelSpec>> specs =
      ParseTuneSpec(kSpec, "s.json");
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 1u);
  const KernelSpec &s = (*specs)[0];
  EXPECT_EQ(s.kernel, "tuned_saxpy");
  EXPECT_EQ(s.grid, std::vector<std::string>{"cdiv(n, BLOCK)"});
  EXPECT_TRUE(s.args.at("x_ptr").buffer);
  EXPECT_EQ(s.args.at("x_ptr").init, "random");
  EXPECT_EQ(s.args.at("y_ptr").init, "ones");
  EXPECT_TRUE(s.args.at("out_ptr").output);
  EXPECT_EQ(s.args.at("out_ptr").init, "zeros");
  EXPECT_TRUE(s.args.at("alpha").is_number);
  EXPECT_DOUBLE_EQ(s.args.at("alpha").number, 2.5);
  EXPECT_EQ(s.args.at("n").expression, "n");
  ASSERT_EQ(s.shapes.size(), 2u);
  EXPECT_EQ(s.shapes[1][0].second, 1048576);
  EXPECT_DOUBLE_EQ(s.rtol, 0.001);
  EXPECT_LT(s.atol, 0);
}

TEST(Spec, ErrorsNameTheField) {
  std::string bad = kSpec;
  bad.replace(bad.find("\"init\": \"ones\""), 14, "\"init\": \"twos\"");
  absl::StatusOr<std::vector<KernelSpec>> specs = ParseTuneSpec(bad, "s.json");
  EXPECT_THAT(specs.status().message(),
              HasSubstr("s.json:4: kernels[0].args.y_ptr.init: expected "
                        "\"random\", \"zeros\" or \"ones\", got \"twos\""));
  EXPECT_THAT(ParseTuneSpec("{\"kernels\": [{}]}", "s.json").status().message(),
              HasSubstr("kernels[0].kernel: missing"));
  EXPECT_THAT(ParseTuneSpec("[]", "s.json").status().message(),
              HasSubstr("expected an object with one field, \"kernels\""));
}

// A kernel with tuned_saxpy's parameters and tuning description.
struct Saxpy {
  ParamInfo params[5] = {{"x_ptr", "*fp32", 16},
                         {"y_ptr", "*fp32", 16},
                         {"out_ptr", "*fp32", 16},
                         {"alpha", "fp32", 1},
                         {"n", "i32", 16}};
  VariantInfo variant = {
      "v", "tuned_saxpy", "sig", 4,       3, 1,  true, nullptr,
      0,   params,        5,     nullptr, 0, "", "",   nullptr};
  const char *key[1] = {"n"};
  int key_params[1] = {4};
  const char *configs[2] = {"BLOCK=1024, num_warps=4, num_stages=3",
                            "BLOCK=256, num_warps=2, num_stages=3"};
  int overload_configs[2] = {0, 1};
  TuningOverload overloads[1] = {
      {"*fp32, *fp32, *fp32, fp32, i32", overload_configs, 2, nullptr}};
  internal::TuningCache cache;
  KernelTuningInfo tuning = {key,       key_params, 1,       configs, 2,
                             overloads, 1,          nullptr, 0,       &cache};
  KernelInfo info = {"tuned_saxpy", &variant, 1, &tuning};
};

KernelSpec SaxpySpec() { return (*ParseTuneSpec(kSpec, "s.json"))[0]; }

TEST(PlanArguments, AcceptsACompleteSpec) {
  Saxpy k;
  absl::StatusOr<ArgumentPlan> plan = PlanArguments(k.info, SaxpySpec());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->overload, 0);
  ASSERT_EQ(plan->params.size(), 5u);
  EXPECT_EQ(plan->params[0].element_bytes, 4);
  EXPECT_TRUE(plan->params[2].spec.output);
}

TEST(PlanArguments, ErrorsNameKernelAndArgument) {
  Saxpy k;
  KernelSpec missing = SaxpySpec();
  missing.args.erase("alpha");
  EXPECT_THAT(PlanArguments(k.info, missing).status().message(),
              HasSubstr("tuned_saxpy: the spec's \"args\" has no entry for "
                        "argument alpha (fp32)"));
  KernelSpec extra = SaxpySpec();
  extra.args["beta"] = extra.args["alpha"];
  EXPECT_THAT(PlanArguments(k.info, extra).status().message(),
              HasSubstr("names beta, which is not an argument"));
  KernelSpec scalar_buffer = SaxpySpec();
  scalar_buffer.args["n"] = scalar_buffer.args["x_ptr"];
  EXPECT_THAT(PlanArguments(k.info, scalar_buffer).status().message(),
              HasSubstr("argument n is i32, so the spec must give an "
                        "expression or a number"));
  KernelSpec no_output = SaxpySpec();
  no_output.args["out_ptr"].output = false;
  EXPECT_THAT(PlanArguments(k.info, no_output).status().message(),
              HasSubstr("no buffer is marked \"output\": true"));
  KernelSpec types = SaxpySpec();
  types.types = "*fp16";
  EXPECT_THAT(PlanArguments(k.info, types).status().message(),
              HasSubstr("no overload takes (*fp16)"));
  KernelInfo plain = {"plain", &k.variant, 1};
  EXPECT_THAT(PlanArguments(plain, SaxpySpec()).status().message(),
              HasSubstr("plain: not built with autotune"));
}

// A kernel with a tuple parameter (stride=(i32, 1), the second element
// constexpr): ParamInfo lists its elements one by one.
struct StridedCopy {
  ParamInfo params[5] = {{"x_ptr", "*fp32", 1},
                         {"out_ptr", "*fp32", 1},
                         {"stride[0]", "i32", 1},
                         {"stride[1]", "i32", 1, false, "1"},
                         {"n", "i32", 1}};
  VariantInfo variant = {
      "v", "strided_copy", "sig", 4,       3, 1,  false, nullptr,
      0,   params,         5,     nullptr, 0, "", "",    nullptr};
  const char *configs[1] = {"BLOCK=256, num_warps=4, num_stages=3"};
  int overload_configs[1] = {0};
  TuningOverload overloads[1] = {
      {"*fp32, *fp32, i32, i32, i32", overload_configs, 1, nullptr}};
  internal::TuningCache cache;
  KernelTuningInfo tuning = {nullptr,   nullptr, 0,       configs, 1,
                             overloads, 1,       nullptr, 0,       &cache};
  KernelInfo info = {"strided_copy", &variant, 1, &tuning};
};

// The spec names a tuple's elements as ParamInfo does ("stride[0]"); a
// constexpr element it leaves out gets its compiled value.
TEST(PlanArguments, TupleElementsByName) {
  StridedCopy k;
  KernelSpec spec = (*ParseTuneSpec(R"json({"kernels": [{
    "kernel": "strided_copy", "grid": ["cdiv(n, BLOCK)"],
    "args": {"x_ptr": {"elements": "n"}, "out_ptr": {"elements": "n", "output": true},
             "stride[0]": "n", "n": "n"},
    "shapes": [{"n": 4096}]}]})json",
                                    "s.json"))[0];
  absl::StatusOr<ArgumentPlan> plan = PlanArguments(k.info, spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->params.size(), 5u);
  EXPECT_EQ(plan->params[2].spec.expression, "n");
  EXPECT_EQ(plan->params[3].name, "stride[1]");
  EXPECT_EQ(plan->params[3].spec.expression, "1");
  // A value the spec gives wins (the launcher then checks it).
  spec.args["stride[1]"].expression = "2";
  plan = PlanArguments(k.info, spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->params[3].spec.expression, "2");
  // A run-time element must be given.
  spec.args.erase("stride[0]");
  EXPECT_THAT(PlanArguments(k.info, spec).status().message(),
              HasSubstr("strided_copy: the spec's \"args\" has no entry for "
                        "argument stride[0] (i32)"));
}

TEST(TuneMain, UsageErrorsWithoutAGpu) {
  Saxpy k;
  std::vector<const KernelInfo *> kernels = {&k.info};
  const char *no_spec[] = {"tuner", "--out", "t.json"};
  EXPECT_EQ(TuneMain(kernels, 3, const_cast<char **>(no_spec)), 1);
  const char *help[] = {"tuner", "--help"};
  EXPECT_EQ(TuneMain(kernels, 2, const_cast<char **>(help)), 0);
  const char *missing[] = {"tuner", "--spec", "/nonexistent/s.json", "--out",
                           "t.json"};
  EXPECT_EQ(TuneMain(kernels, 5, const_cast<char **>(missing)), 1);
  const char *no_rounds[] = {"tuner",  "--spec",   "s.json", "--out",
                             "t.json", "--rounds", "0"};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(TuneMain(kernels, 7, const_cast<char **>(no_rounds)), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("--rounds needs an integer >= 1, got '0'"));
}

// A complete spec gets as far as the device: without a GPU, an error.
TEST(TuneMain, ChecksTheSpecBeforeTheDevice) {
  Saxpy k;
  std::vector<const KernelInfo *> kernels = {&k.info};
  std::string dir = ::testing::TempDir();
  std::string spec = dir + "/kiln_tune_spec.json";
  std::string out = dir + "/kiln_tune_out.json";
  {
    std::ofstream file(spec);
    file << kSpec;
  }
  const char *run[] = {"tuner", "--spec", spec.c_str(), "--out", out.c_str()};
  if (CurrentDevice().ok())
    GTEST_SKIP() << "this machine has a GPU";
  ::testing::internal::CaptureStderr();
  int status = TuneMain(kernels, 5, const_cast<char **>(run));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_THAT(err, HasSubstr("tuner: error: "));
  EXPECT_THAT(err, Not(HasSubstr("spec"))); // the spec was fine

  // A spec naming a kernel the tuner lacks fails before any device work.
  {
    std::ofstream file(spec);
    std::string text = kSpec;
    file << text.replace(text.find("tuned_saxpy"), 11, "other_kernel");
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(TuneMain(kernels, 5, const_cast<char **>(run)), 1);
  EXPECT_THAT(::testing::internal::GetCapturedStderr(),
              HasSubstr("the spec names kernel other_kernel, which this tuner "
                        "does not have (it has tuned_saxpy)"));
}

} // namespace
} // namespace kiln::tune
