#include "kiln/describe.h"

#include <string>

#include "test_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DescribeKernel, ListsVariantsAndImages) {
  testing::TestKernel kernel({"sm_80", "sm_90a"}, /*num_warps=*/8,
                             /*shared_bytes=*/4096);
  const std::string text = DescribeKernel(kernel.info());
  EXPECT_THAT(text, HasSubstr("kernel add_kernel: 1 variant\n"));
  EXPECT_THAT(text, HasSubstr("variant 0: x_ptr=*fp32, n=i32, BLOCK=1024"));
  EXPECT_THAT(text, HasSubstr("256 threads per program"));
  EXPECT_THAT(text, HasSubstr("sm_80 "));
  EXPECT_THAT(text, HasSubstr("sm_90a"));
  EXPECT_THAT(text, HasSubstr(" 16 registers"));
  EXPECT_THAT(text, HasSubstr("4096 bytes shared memory"));
  EXPECT_EQ(text.back(), '\n');
}

TEST(DescribeKernel, ShowsGlobalScratchWhenAnImageUsesIt) {
  testing::TestKernel kernel({"sm_80", "sm_90a"});
  EXPECT_THAT(DescribeKernel(kernel.info()), Not(HasSubstr("global scratch")));
  kernel.mutable_variant().global_scratch_arg = 2;
  kernel.mutable_image(1).global_scratch_bytes = 256;
  const std::string text = DescribeKernel(kernel.info());
  EXPECT_THAT(text, HasSubstr("0 bytes shared memory, 256 bytes global "
                              "scratch per program\n"));
  EXPECT_THAT(text, HasSubstr("0 bytes shared memory\n"));
}

TEST(DescribeKernel, NamesTheArgumentsTakenEqualToOne) {
  testing::TestKernel kernel({"sm_90a"});
  const ParamInfo params[2] = {{"x_ptr", "*fp32", 16},
                               {"n", "i32", 1, /*equal_to_1=*/true}};
  VariantInfo variant = kernel.variant();
  variant.params = params;
  const KernelInfo info = {"add_kernel", &variant, 1};
  EXPECT_THAT(DescribeKernel(info), HasSubstr(", takes n equal to 1\n"));
  EXPECT_THAT(DescribeKernel(kernel.info()), Not(HasSubstr("equal to 1")));
}

TEST(DescribeKernel, NamesTheConstexprTupleElements) {
  testing::TestKernel kernel({"sm_90a"});
  const ParamInfo params[3] = {{"x_ptr", "*fp32", 16},
                               {"stride[0]", "i32", 1},
                               {"stride[1]", "i32", 1, false, "1"}};
  VariantInfo variant = kernel.variant();
  variant.params = params;
  variant.num_params = 3;
  const KernelInfo info = {"copy", &variant, 1};
  EXPECT_THAT(DescribeKernel(info), HasSubstr(", compiled for stride[1]=1\n"));
  EXPECT_THAT(DescribeKernel(kernel.info()), Not(HasSubstr("compiled for")));
}

} // namespace
} // namespace kiln
