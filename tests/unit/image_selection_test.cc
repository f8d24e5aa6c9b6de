#include "kiln/internal/image_selection.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kiln/kernel_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::internal {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<CubinImage> Images(std::vector<const char *> archs) {
  std::vector<CubinImage> images;
  for (const char *arch : archs)
    images.push_back({arch, nullptr, 0, 0, 0, 0});
  return images;
}

int Select(int major, int minor, std::vector<const char *> archs) {
  absl::StatusOr<int> index = SelectImage(major, minor, Images(archs));
  return index.ok() ? *index : -1;
}

TEST(ParseArch, PlainSuffixedAndThreeDigit) {
  absl::StatusOr<Arch> a = ParseArch("sm_86");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->major, 8);
  EXPECT_EQ(a->minor, 6);
  EXPECT_EQ(a->suffix, '\0');
  a = ParseArch("sm_90a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->major, 9);
  EXPECT_EQ(a->suffix, 'a');
  a = ParseArch("sm_120f");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->major, 12);
  EXPECT_EQ(a->minor, 0);
  EXPECT_EQ(a->suffix, 'f');
}

TEST(ParseArch, RejectsOtherNames) {
  for (const char *bad : {"", "sm_", "sm_9", "compute_90", "sm_90b", "sm_9x",
                          "sm_1000", "SM_90"}) {
    EXPECT_FALSE(ParseArch(bad).ok()) << bad;
  }
}

TEST(ArchName, FromComputeCapability) {
  EXPECT_EQ(ArchName(8, 6), "sm_86");
  EXPECT_EQ(ArchName(10, 0), "sm_100");
}

TEST(SelectImage, ExactMatch) {
  EXPECT_EQ(Select(8, 0, {"sm_80", "sm_90a"}), 0);
  EXPECT_EQ(Select(9, 0, {"sm_80", "sm_90"}), 1);
  EXPECT_EQ(Select(9, 0, {"sm_80", "sm_90a"}), 1);
  EXPECT_EQ(Select(12, 0, {"sm_90a", "sm_120a"}), 1);
}

TEST(SelectImage, PrefersArchSpecificOnExactMatch) {
  EXPECT_EQ(Select(9, 0, {"sm_90", "sm_90a"}), 1);
  EXPECT_EQ(Select(9, 0, {"sm_90a", "sm_90"}), 0);
}

TEST(SelectImage, BinaryCompatibleWithinMajor) {
  EXPECT_EQ(Select(8, 6, {"sm_80", "sm_90a"}), 0);
  EXPECT_EQ(Select(8, 9, {"sm_80", "sm_86"}), 1); // closest lower minor
  EXPECT_EQ(Select(8, 9, {"sm_86", "sm_80"}), 0);
  EXPECT_EQ(Select(8, 6, {"sm_80", "sm_86"}), 1); // exact beats compatible
}

TEST(SelectImage, NeverAcrossMajorVersions) {
  EXPECT_EQ(Select(9, 0, {"sm_80", "sm_86"}), -1);
  EXPECT_EQ(Select(10, 0, {"sm_90a"}), -1);
  EXPECT_EQ(Select(8, 0, {"sm_90"}), -1);
}

TEST(SelectImage, ArchSpecificImagesRunOnlyOnTheirExactArch) {
  EXPECT_EQ(Select(8, 6, {"sm_80a"}), -1);
  EXPECT_EQ(Select(8, 6, {"sm_80a", "sm_80"}), 1);
  EXPECT_EQ(Select(10, 3, {"sm_100a"}), -1);
}

TEST(SelectImage, FamilyImagesRunOnLaterMinors) {
  EXPECT_EQ(Select(10, 3, {"sm_100f"}), 0);
  EXPECT_EQ(Select(10, 0, {"sm_100f", "sm_100a"}), 1);
  EXPECT_EQ(Select(12, 1, {"sm_120f"}), 0);
  EXPECT_EQ(Select(12, 0, {"sm_121f"}), -1);
}

TEST(SelectImage, HigherMinorImageDoesNotRunOnLowerMinorDevice) {
  EXPECT_EQ(Select(8, 0, {"sm_86"}), -1);
}

TEST(SelectImage, SkipsUnparsableArchs) {
  EXPECT_EQ(Select(8, 0, {"bogus", "sm_80"}), 1);
}

TEST(SelectImage, ErrorListsBuiltArchsAndDeviceArch) {
  absl::StatusOr<int> index = SelectImage(7, 5, Images({"sm_80", "sm_90a"}));
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(index.status().message()),
              AllOf(HasSubstr("sm_75"), HasSubstr("compute capability 7.5"),
                    HasSubstr("sm_80, sm_90a")));
}

TEST(SelectImage, ErrorWithNoImages) {
  absl::StatusOr<int> index = SelectImage(9, 0, {});
  ASSERT_FALSE(index.ok());
  EXPECT_THAT(std::string(index.status().message()), HasSubstr("nothing"));
}

// Images from "sm_80" (a cubin) and "ptx:sm_80" (PTX) names.
std::vector<CubinImage> Mixed(std::vector<const char *> names) {
  std::vector<CubinImage> images;
  for (const char *name : names) {
    const bool ptx = std::string(name).rfind("ptx:", 0) == 0;
    CubinImage image = {ptx ? name + 4 : name, nullptr, 0, 0, 0, 0};
    image.format = ptx ? ImageFormat::kPtx : ImageFormat::kCubin;
    images.push_back(image);
  }
  return images;
}

int SelectMixed(int major, int minor, std::vector<const char *> names) {
  absl::StatusOr<int> index = SelectImage(major, minor, Mixed(names));
  return index.ok() ? *index : -1;
}

TEST(SelectImage, PtxOnlyWhenNoCubinFits) {
  // A fitting cubin wins over PTX, whatever the order.
  EXPECT_EQ(SelectMixed(9, 0, {"ptx:sm_90a", "sm_90a"}), 1);
  EXPECT_EQ(SelectMixed(8, 6, {"ptx:sm_86", "sm_80"}), 1);
  // No cubin for Hopper: sm_80 PTX is JIT-compiled there, and on Blackwell.
  EXPECT_EQ(SelectMixed(9, 0, {"sm_80", "ptx:sm_80"}), 1);
  EXPECT_EQ(SelectMixed(12, 0, {"sm_80", "sm_90a", "ptx:sm_80"}), 2);
  // The newest PTX the device can take.
  EXPECT_EQ(SelectMixed(10, 0, {"ptx:sm_80", "ptx:sm_90", "ptx:sm_120"}), 1);
  // Arch-specific PTX only on its own compute capability.
  EXPECT_EQ(SelectMixed(10, 0, {"ptx:sm_90a"}), -1);
  EXPECT_EQ(SelectMixed(9, 0, {"ptx:sm_90a"}), 0);
  // PTX for a newer arch cannot run.
  EXPECT_EQ(SelectMixed(8, 0, {"ptx:sm_86"}), -1);
}

TEST(SelectImage, ErrorListsCubinsAndPtx) {
  absl::StatusOr<int> index =
      SelectImage(8, 0, Mixed({"sm_90a", "ptx:sm_90a"}));
  ASSERT_FALSE(index.ok());
  EXPECT_THAT(std::string(index.status().message()),
              AllOf(HasSubstr("built for: sm_90a; PTX for: sm_90a"),
                    HasSubstr("sm_80, compute capability 8.0")));
  index = SelectImage(8, 0, Mixed({"sm_90a"}));
  ASSERT_FALSE(index.ok());
  EXPECT_THAT(std::string(index.status().message()),
              AllOf(HasSubstr("(no PTX embedded)"),
                    HasSubstr("or embed PTX (ptx = True / PTX)")));
}

} // namespace
} // namespace kiln::internal
