// Images embedded by the assembler (kiln-codegen --embed incbin), stored as
// they are and zstd-compressed: linked into this test, each reads back, via
// the runtime, as the bytes of its image file.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "embed_check/plain.h"
#include "embed_check/zstd.h"
#include "kiln/internal/image_data.h"
#include "kiln/kernel_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

// The images' contents, as tests/unit/CMakeLists.txt and BUILD.bazel write
// them ("fake cubin <variant>").
const std::set<std::string> &Expected() {
  static const std::set<std::string> *expected =
      new std::set<std::string>{"fake cubin scale_aligned_sm_90a",
                                "fake cubin copy_sm_80",
                                "fake cubin strided_matmul_general_sm_90a",
                                "fake cubin strided_matmul_aligned_sm_90a",
                                "fake cubin strided_matmul_unit_stride_sm_90a",
                                "fake cubin row_copy_sm_80",
                                "fake cubin device_desc_sm_80",
                                "fake cubin device_desc_sm_90a",
                                "fake cubin tuple_strides_general_sm_80",
                                "fake cubin tuple_strides_aligned_sm_80",
                                "fake cubin mixed_tuple_sm_80"};
  return *expected;
}

std::set<std::string> Contents(std::vector<const kiln::KernelInfo *> kernels,
                               bool compressed) {
  std::set<std::string> contents;
  for (const kiln::KernelInfo *kernel : kernels) {
    for (int v = 0; v < kernel->num_variants; ++v) {
      const kiln::VariantInfo &variant = kernel->variants[v];
      for (int i = 0; i < variant.num_images; ++i) {
        const kiln::CubinImage &image = variant.images[i];
        EXPECT_EQ(image.compression, compressed
                                         ? kiln::ImageCompression::kZstd
                                         : kiln::ImageCompression::kNone);
        // Aligned as the driver wants ELF images.
        EXPECT_EQ(reinterpret_cast<uintptr_t>(image.data) % 64, 0u);
        absl::StatusOr<const unsigned char *> data =
            kiln::internal::ImageData(image);
        if (!data.ok()) {
          ADD_FAILURE() << data.status();
          continue;
        }
        const size_t size = compressed ? image.uncompressed_size : image.size;
        contents.emplace(reinterpret_cast<const char *>(*data), size);
      }
    }
  }
  return contents;
}

TEST(Embed, IncbinImagesReadBackAsTheirFiles) {
  using namespace kiln_test::embed_plain;
  EXPECT_EQ(Contents({&scale_kernel_info(), &copy_kernel_info(),
                      &strided_matmul_info(), &row_copy_info(),
                      &device_desc_kernel_info(), &tuple_strides_info(),
                      &mixed_tuple_info()},
                     false),
            Expected());
}

TEST(Embed, CompressedIncbinImagesInflateToTheirFiles) {
  using namespace kiln_test::embed_zstd;
  EXPECT_EQ(Contents({&scale_kernel_info(), &copy_kernel_info(),
                      &strided_matmul_info(), &row_copy_info(),
                      &device_desc_kernel_info(), &tuple_strides_info(),
                      &mixed_tuple_info()},
                     true),
            Expected());
}

// The fields after a compressed image's (positional in the initializer)
// keep their places.
void ExpectGlobalScratch(const kiln::KernelInfo &kernel, bool compressed) {
  ASSERT_EQ(kernel.num_variants, 1);
  const kiln::VariantInfo &variant = kernel.variants[0];
  // a_ptr, out_ptr, M, N, then the scratch pointer.
  EXPECT_EQ(variant.global_scratch_arg, 4);
  ASSERT_EQ(variant.num_images, 2);
  EXPECT_STREQ(variant.images[0].arch, "sm_80");
  EXPECT_EQ(variant.images[0].global_scratch_bytes, 0);
  EXPECT_STREQ(variant.images[1].arch, "sm_90a");
  EXPECT_EQ(variant.images[1].global_scratch_bytes, 256);
  EXPECT_EQ(variant.images[1].shared_bytes, 16384);
  EXPECT_EQ(variant.images[1].compression, compressed
                                               ? kiln::ImageCompression::kZstd
                                               : kiln::ImageCompression::kNone);
  EXPECT_EQ(variant.images[1].uncompressed_size,
            compressed ? sizeof("fake cubin device_desc_sm_90a") - 1 : 0u);
  // Kernels without the parameter have none.
  EXPECT_EQ(
      kiln_test::embed_plain::copy_kernel_info().variants[0].global_scratch_arg,
      -1);
}

TEST(Embed, GlobalScratchFieldsFollowTheCompressionFields) {
  ExpectGlobalScratch(kiln_test::embed_plain::device_desc_kernel_info(), false);
  ExpectGlobalScratch(kiln_test::embed_zstd::device_desc_kernel_info(), true);
}

} // namespace
