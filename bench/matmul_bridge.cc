// A C interface to Kiln's generated launchers for upstream's matmul tutorial
// (tutorial 03's matmul_kernel), for bench/matmul.py to call through ctypes
// on the tensors PyTorch allocated, on PyTorch's stream, so that Kiln, Triton
// and cuBLAS are checked and timed on the same buffers in one process.
//
// Two builds of the same kernel: `bench::tutorial_sm90a` (ARCHS sm_90a, the
// wgmma path) and `bench::tutorial_sm90` (ARCHS sm_90, the mma.sync path);
// both run on an H100, so the caller picks the code path by picking the
// build. Each has one launcher overload per element type (fp16, bf16, fp8e5,
// fp8e4nv; C is fp16 as the tutorial writes it) and one config per autotune
// config of the tutorial (plus the extra configs bench/CMakeLists.txt adds).

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "bench/matmul_tutorial_sm90.h"
#include "bench/matmul_tutorial_sm90a.h"
#include "kiln/runtime.h"

namespace {

// What the last launch ran, from the launch observer.
struct LastLaunch {
  std::string description;
};
LastLaunch last_launch;

// `text` as a JSON string literal's contents (variant names quote string
// constexprs: ACTIVATION="").
std::string JsonEscape(const char* text) {
  std::string out;
  for (const char* p = text; *p != 0; ++p) {
    if (*p == '"' || *p == '\\') out += '\\';
    out += *p;
  }
  return out;
}

void RecordLaunch(const kiln::LaunchEvent& event, void*) {
  const kiln::VariantInfo& v = *event.variant;
  std::string name = JsonEscape(v.name);
  char text[1024];
  if (event.image != nullptr) {
    std::snprintf(text, sizeof text,
                  "{\"variant\": \"%s\", \"aligned\": %s, \"arch\": \"%s\", "
                  "\"registers\": %d, \"spills\": %d, \"shared_bytes\": %d}",
                  name.c_str(), v.aligned ? "true" : "false", event.image->arch,
                  event.image->registers, event.image->spills,
                  event.image->shared_bytes);
  } else {
    std::snprintf(text, sizeof text, "{\"variant\": \"%s\", \"aligned\": %s}",
                  name.c_str(), v.aligned ? "true" : "false");
  }
  last_launch.description = text;
}

void CopyOut(const std::string& text, char* out, int out_size) {
  if (out == nullptr || out_size <= 0) return;
  std::snprintf(out, static_cast<size_t>(out_size), "%s", text.c_str());
}

// One launch of `Launch` (a build's launch_matmul_kernel overload set) with
// element type T for A and B.
template <typename Config, typename T, typename Launch>
absl::Status LaunchTyped(Launch launch, uint64_t a, uint64_t b, uint64_t c,
                         const int32_t* sizes, const int32_t* meta,
                         CUstream stream) {
  Config config;
  config.BLOCK_SIZE_M = meta[0];
  config.BLOCK_SIZE_N = meta[1];
  config.BLOCK_SIZE_K = meta[2];
  config.GROUP_SIZE_M = meta[3];
  config.ACTIVATION = "";
  config.num_warps = meta[4];
  config.num_stages = meta[5];
  config.num_ctas = 1;
  const int32_t m = sizes[0], n = sizes[1], k = sizes[2];
  kiln::Grid grid(
      static_cast<uint32_t>(kiln::cdiv(m, meta[0]) * kiln::cdiv(n, meta[1])));
  return launch(config, grid, stream, reinterpret_cast<T*>(a),
                reinterpret_cast<T*>(b), reinterpret_cast<kiln::half*>(c), m, n,
                k, sizes[3], sizes[4], sizes[5], sizes[6], sizes[7], sizes[8]);
}

template <typename Config, typename Launch>
absl::Status LaunchBuild(Launch launch, int dtype, uint64_t a, uint64_t b,
                         uint64_t c, const int32_t* sizes, const int32_t* meta,
                         CUstream stream) {
  // Each type is there only if bench/matmul_tutorial.cmake compiled it
  // (KILN_MATMUL_TYPES).
  switch (dtype) {
#ifdef KILN_MATMUL_TYPE_fp16
    case 0:
      return LaunchTyped<Config, kiln::half>(launch, a, b, c, sizes, meta,
                                             stream);
#endif
#ifdef KILN_MATMUL_TYPE_bf16
    case 1:
      return LaunchTyped<Config, kiln::bfloat16>(launch, a, b, c, sizes, meta,
                                                 stream);
#endif
#ifdef KILN_MATMUL_TYPE_fp8e5
    case 2:
      return LaunchTyped<Config, kiln::float8_e5m2>(launch, a, b, c, sizes,
                                                    meta, stream);
#endif
#ifdef KILN_MATMUL_TYPE_fp8e4nv
    case 3:
      return LaunchTyped<Config, kiln::float8_e4m3>(launch, a, b, c, sizes,
                                                    meta, stream);
#endif
    default:
      return absl::InvalidArgumentError(
          "dtype " + std::to_string(dtype) +
          " (0 fp16, 1 bf16, 2 fp8e5, 3 fp8e4nv) is not in this build "
          "(KILN_MATMUL_TYPES)");
  }
}

}  // namespace

extern "C" {

// Launches the tutorial's matmul_kernel, C = A @ B with C fp16, on `stream`
// (a CUstream; 0 is the default stream):
//   build: 0 = the sm_90a build (wgmma), 1 = the sm_90 build (mma.sync);
//   dtype: 0 fp16, 1 bf16, 2 fp8e5, 3 fp8e4nv (A's and B's element type);
//   sizes: M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
//          stride_cn (elements);
//   meta:  BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M, num_warps,
//          num_stages (a config the build compiled).
// Returns 0 when the launch was queued; otherwise writes the launcher's
// status (naming the kernel, the variant and the cause) into `error`.
int kiln_matmul(int build, int dtype, uint64_t a, uint64_t b, uint64_t c,
                const int32_t* sizes, const int32_t* meta, uint64_t stream,
                char* error, int error_size) {
  CUstream s = reinterpret_cast<CUstream>(stream);
  absl::Status status;
  if (build == 0) {
    status = LaunchBuild<bench::tutorial_sm90a::matmul_kernel_config>(
        [](auto&&... args) {
          return bench::tutorial_sm90a::launch_matmul_kernel(args...);
        },
        dtype, a, b, c, sizes, meta, s);
  } else if (build == 1) {
    status = LaunchBuild<bench::tutorial_sm90::matmul_kernel_config>(
        [](auto&&... args) {
          return bench::tutorial_sm90::launch_matmul_kernel(args...);
        },
        dtype, a, b, c, sizes, meta, s);
  } else {
    status =
        absl::InvalidArgumentError("build must be 0 (sm_90a) or 1 (sm_90)");
  }
  if (status.ok()) return 0;
  CopyOut(status.ToString(), error, error_size);
  return 1;
}

// Records, from the next launch on, what each launch ran; kiln_matmul_last
// then describes the last one as JSON (variant, aligned, arch, registers,
// spills, shared_bytes).
void kiln_matmul_observe() { kiln::SetLaunchObserver(&RecordLaunch, nullptr); }

void kiln_matmul_last(char* out, int out_size) {
  CopyOut(last_launch.description, out, out_size);
}

// The inventory of a build (every variant with its registers, spills and
// shared memory), as kiln::DescribeKernel writes it.
void kiln_matmul_describe(int build, char* out, int out_size) {
  const kiln::KernelInfo& info =
      build == 0 ? bench::tutorial_sm90a::matmul_kernel_info()
                 : bench::tutorial_sm90::matmul_kernel_info();
  CopyOut(kiln::DescribeKernel(info), out, out_size);
}

}  // extern "C"
