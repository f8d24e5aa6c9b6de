#include "kiln/internal/image_selection.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"
#include "kiln/kernel_info.h"

namespace kiln {
namespace internal {
namespace {

// How well an image fits a device; higher is better, 0 does not run.
int Rank(const Arch& image, int major, int minor) {
  if (image.major != major || image.minor > minor) return 0;
  if (image.minor == minor) {
    if (image.suffix == 'a') return 1000;
    return 999;
  }
  if (image.suffix == 'a') return 0;  // arch-specific: this exact CC only
  return 1 + image.minor;             // closest lower minor first
}

// How well PTX fits a device; higher is better, 0 cannot be JIT-compiled
// for it. PTX for sm_XY compiles for any device of compute capability X.Y or
// later; arch-specific PTX (sm_XYa) only for X.Y.
int PtxRank(const Arch& image, int major, int minor) {
  const int image_cc = image.major * 10 + image.minor;
  const int device_cc = major * 10 + minor;
  if (image_cc > device_cc) return 0;
  if (image.suffix == 'a' && image_cc != device_cc) return 0;
  if (image.suffix == 'f' && image.major != major) return 0;
  return 1 + image_cc;  // the newest PTX the device can take
}

}  // namespace

absl::StatusOr<Arch> ParseArch(absl::string_view name) {
  absl::string_view rest = name;
  Arch arch;
  if (!absl::ConsumePrefix(&rest, "sm_") || rest.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad GPU architecture '", name, "' (expected sm_XY)"));
  }
  if (rest.back() == 'a' || rest.back() == 'f') {
    arch.suffix = rest.back();
    rest.remove_suffix(1);
  }
  int number = 0;
  if (rest.size() < 2 || rest.size() > 3 ||
      !std::all_of(rest.begin(), rest.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(rest, &number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad GPU architecture '", name, "' (expected sm_XY)"));
  }
  arch.major = number / 10;
  arch.minor = number % 10;
  return arch;
}

std::string ArchName(int major, int minor) {
  return absl::StrCat("sm_", major, minor);
}

absl::StatusOr<int> SelectImage(int major, int minor,
                                absl::Span<const CubinImage> images) {
  for (const ImageFormat format : {ImageFormat::kCubin, ImageFormat::kPtx}) {
    int best = -1;
    int best_rank = 0;
    for (int i = 0; i < static_cast<int>(images.size()); ++i) {
      if (images[i].arch == nullptr || images[i].format != format) continue;
      absl::StatusOr<Arch> arch = ParseArch(images[i].arch);
      if (!arch.ok()) continue;
      const int rank = format == ImageFormat::kCubin
                           ? Rank(*arch, major, minor)
                           : PtxRank(*arch, major, minor);
      if (rank > best_rank) {
        best = i;
        best_rank = rank;
      }
    }
    if (best >= 0) return best;
  }

  std::vector<absl::string_view> cubins;
  std::vector<absl::string_view> ptx;
  for (const CubinImage& image : images) {
    (image.format == ImageFormat::kPtx ? ptx : cubins)
        .push_back(image.arch != nullptr ? image.arch : "(null)");
  }
  return absl::NotFoundError(absl::StrCat(
      "no cubin runs on this device (", ArchName(major, minor),
      ", compute capability ", major, ".", minor, "); built for: ",
      cubins.empty() ? "nothing" : absl::StrJoin(cubins, ", "),
      ptx.empty() ? " (no PTX embedded)"
                  : absl::StrCat("; PTX for: ", absl::StrJoin(ptx, ", ")),
      ". A cubin for sm_XY runs on X.Y and later X.* devices, one for sm_XYa "
      "only on X.Y; rebuild with this device's arch",
      ptx.empty() ? ", or embed PTX (ptx = True / PTX) to JIT on newer ones"
                  : ""));
}

}  // namespace internal
}  // namespace kiln
