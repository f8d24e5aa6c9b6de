// kiln::internal::ImageData: stored images as they are, zstd-compressed ones
// inflated once through a dlopen'ed libzstd.

#include "kiln/internal/image_data.h"

#include <dlfcn.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/kernel_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace internal {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A zstd frame holding `content` (under 256 bytes) in one raw block: what
// libzstd must inflate, built by hand so that the test needs no zstd.h.
std::vector<unsigned char> RawFrame(const std::string &content) {
  std::vector<unsigned char> frame = {
      0x28,
      0xb5,
      0x2f,
      0xfd, // magic
      0x20, // single segment, 1-byte size
      static_cast<unsigned char>(content.size())};
  const unsigned header = 1u | (static_cast<unsigned>(content.size()) << 3);
  frame.push_back(header & 0xff); // last block, raw, its size
  frame.push_back((header >> 8) & 0xff);
  frame.push_back((header >> 16) & 0xff);
  frame.insert(frame.end(), content.begin(), content.end());
  return frame;
}

bool HaveZstd() {
  void *handle = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr)
    dlclose(handle);
  return handle != nullptr;
}

TEST(ImageData, StoredImagesAreUsedInPlace) {
  static const unsigned char bytes[] = "\x7f"
                                       "ELF";
  static const CubinImage image = {"sm_80", bytes, sizeof(bytes), 0, 0, 0};
  absl::StatusOr<const unsigned char *> data = ImageData(image);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(*data, bytes);
}

TEST(ImageData, ZstdImagesInflateOnce) {
  if (!HaveZstd())
    GTEST_SKIP() << "SKIPPED: libzstd.so.1 is not installed";
  const std::string content = "\x7f"
                              "ELF fake cubin, compressed";
  static const std::vector<unsigned char> frame = RawFrame(content);
  static const CubinImage image = {"sm_90a",
                                   frame.data(),
                                   frame.size(),
                                   0,
                                   0,
                                   0,
                                   ImageFormat::kCubin,
                                   ImageCompression::kZstd,
                                   content.size()};
  absl::StatusOr<const unsigned char *> first = ImageData(image);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(std::string(reinterpret_cast<const char *>(*first), content.size()),
            content);
  absl::StatusOr<const unsigned char *> second = ImageData(image);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, *first); // inflated once, kept
}

TEST(ImageData, AWrongSizeOrABadFrameIsDataLoss) {
  if (!HaveZstd())
    GTEST_SKIP() << "SKIPPED: libzstd.so.1 is not installed";
  static const std::vector<unsigned char> frame = RawFrame("twelve bytes");
  static const CubinImage longer = {"sm_80",
                                    frame.data(),
                                    frame.size(),
                                    0,
                                    0,
                                    0,
                                    ImageFormat::kCubin,
                                    ImageCompression::kZstd,
                                    20};
  absl::StatusOr<const unsigned char *> data = ImageData(longer);
  EXPECT_EQ(data.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(data.status().message(),
              AllOf(HasSubstr("sm_80"), HasSubstr("recorded 20 bytes"),
                    HasSubstr("got 12 bytes")));
  static const CubinImage shorter = {"sm_80",
                                     frame.data(),
                                     frame.size(),
                                     0,
                                     0,
                                     0,
                                     ImageFormat::kCubin,
                                     ImageCompression::kZstd,
                                     5};
  EXPECT_EQ(ImageData(shorter).status().code(), absl::StatusCode::kDataLoss);
  static const unsigned char garbage[] = "not a zstd frame";
  static const CubinImage corrupt = {
      "sm_86", garbage,           sizeof(garbage),         0,  0,
      0,       ImageFormat::kPtx, ImageCompression::kZstd, 100};
  data = ImageData(corrupt);
  EXPECT_EQ(data.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(data.status().message(), HasSubstr("sm_86"));
}

TEST(ImageData, MissingLibzstdSaysHowToFixIt) {
  static const std::vector<unsigned char> frame = RawFrame("x");
  static const CubinImage image = {"sm_80",
                                   frame.data(),
                                   frame.size(),
                                   0,
                                   0,
                                   0,
                                   ImageFormat::kCubin,
                                   ImageCompression::kZstd,
                                   1};
  absl::StatusOr<const unsigned char *> data =
      ImageData(image, "libkiln-test-no-such-zstd.so.1");
  EXPECT_EQ(data.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(data.status().message(),
              AllOf(HasSubstr("sm_80 image is zstd-compressed"),
                    HasSubstr("libkiln-test-no-such-zstd.so.1"),
                    HasSubstr("compress = \"zstd\"")));
}

} // namespace
} // namespace internal
} // namespace kiln
