// A hand-built KernelInfo for runtime tests: one kernel, one or two variants,
// each with a cubin per arch given by the test.

#ifndef KILN_TESTS_UNIT_TEST_KERNEL_H_
#define KILN_TESTS_UNIT_TEST_KERNEL_H_

#include <deque>
#include <string>
#include <vector>

#include "kiln/internal/variant_cache.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace testing {

// Owns the tables a KernelInfo points into. Not copyable or movable (the
// tables point at each other).
class TestKernel {
public:
  // A kernel "add_kernel" whose variant 0 has one fake cubin per arch in
  // `archs` ("ptx:sm_80" for PTX), num_warps warps and `shared_bytes` of
  // dynamic shared memory.
  explicit TestKernel(std::vector<std::string> archs, int num_warps = 4,
                      int shared_bytes = 0, int num_ctas = 1)
      : archs_(std::move(archs)) {
    for (size_t i = 0; i < archs_.size(); ++i) {
      const bool ptx = archs_[i].rfind("ptx:", 0) == 0;
      if (ptx)
        archs_[i] = archs_[i].substr(4);
      bytes_.push_back(std::string(ptx ? "PTX for " : "cubin for ") +
                       archs_[i]);
      images_.push_back(
          {archs_[i].c_str(),
           reinterpret_cast<const unsigned char *>(bytes_.back().data()),
           bytes_.back().size(), 16, 0, shared_bytes,
           ptx ? ImageFormat::kPtx : ImageFormat::kCubin});
    }
    variants_.push_back({"x_ptr=*fp32, n=i32, BLOCK=1024, num_warps=4",
                         "add_kernel", "*fp32, i32, 1024", num_warps, 3,
                         num_ctas, false, images_.data(),
                         static_cast<int>(images_.size()), params_, 2,
                         constexprs_, 1, "0123", "test", &cache_});
    info_ = {"add_kernel", variants_.data(),
             static_cast<int>(variants_.size())};
  }
  TestKernel(const TestKernel &) = delete;
  TestKernel &operator=(const TestKernel &) = delete;

  const KernelInfo &info() const { return info_; }
  const VariantInfo &variant() const { return variants_[0]; }
  // The fake cubin bytes of image `i`, as cuModuleLoadData sees them.
  const void *image_data(int i) const { return images_[i].data; }
  // Image `i`, for tests that store it otherwise (compressed).
  CubinImage &mutable_image(int i) { return images_[i]; }
  // Variant 0, for tests that give it other fields (global_scratch_arg).
  VariantInfo &mutable_variant() { return variants_[0]; }

private:
  std::vector<std::string> archs_;
  std::deque<std::string> bytes_; // stable addresses
  std::vector<CubinImage> images_;
  ParamInfo params_[2] = {{"x_ptr", "*fp32", 1}, {"n", "i32", 1}};
  ConstexprInfo constexprs_[1] = {{"BLOCK", "1024"}};
  internal::VariantCache cache_;
  std::vector<VariantInfo> variants_;
  KernelInfo info_{};
};

} // namespace testing
} // namespace kiln

#endif // KILN_TESTS_UNIT_TEST_KERNEL_H_
