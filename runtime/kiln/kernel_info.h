// The static description of a compiled kernel: its variants and their cubins.
//
// kiln-codegen emits these as constant tables in each generated .cc file, one
// KernelInfo per Triton kernel; the runtime reads them to choose and load a
// cubin, and users may read them for introspection (see kiln/describe.h).
// They are plain aggregates of pointers to static data: copying one copies no
// cubin, and nothing here is ever freed.

#ifndef KILN_KERNEL_INFO_H_
#define KILN_KERNEL_INFO_H_

#include <cstddef>

namespace kiln {
namespace internal {
struct VariantCache;  // the runtime's, in kiln/internal/variant_cache.h
}  // namespace internal

struct KernelTuningInfo;  // kiln/tuning.h

// What an image holds.
enum class ImageFormat : unsigned char {
  // A cubin (an ELF image) that the driver loads as is.
  kCubin = 0,
  // PTX text, NUL-terminated, that the driver JIT-compiles for the device.
  // The build embeds one per variant, for its highest arch without the `a`
  // suffix (unless `ptx = False` / NO_PTX), and the runtime chooses it only
  // when no cubin runs on the device.
  kPtx = 1,
};

// How an image's bytes are stored.
enum class ImageCompression : unsigned char {
  kNone = 0,
  // One zstd frame (the build's opt-in `compress = "zstd"` / COMPRESS zstd),
  // inflated once, at the image's first load; the runtime then dlopens
  // libzstd.so.1 (it does not link it).
  kZstd = 1,
};

// One image of a variant, compiled for one GPU architecture: a cubin, or
// PTX for the driver to JIT on devices no cubin fits.
struct CubinImage {
  // The architecture the image was built for, as ptxas names it: "sm_80",
  // "sm_90a". See kiln/introspection.h for which devices run it.
  const char* arch;
  // The image and its size in bytes as stored (for PTX, the NUL included;
  // compressed, the frame's size).
  const unsigned char* data;
  size_t size;
  // Registers per thread and bytes of register spill stores, from ptxas.
  int registers;
  int spills;
  // Dynamic shared memory, in bytes, that every launch must request.
  int shared_bytes;
  // A cubin, or the PTX fallback.
  ImageFormat format = ImageFormat::kCubin;
  // As stored; compressed, the image has `uncompressed_size` bytes.
  ImageCompression compression = ImageCompression::kNone;
  size_t uncompressed_size = 0;
  // Bytes of global memory each program (CTA) of a launch gets in the
  // global scratch buffer, when the variant's entry point takes one (see
  // VariantInfo::global_scratch_arg); 0 when this image uses none, and the
  // launch then passes a null pointer.
  int global_scratch_bytes = 0;
  // Warps a warp-specialized image runs beyond the variant's num_warps (its
  // producer warpgroup): its launches start 32 * (num_warps +
  // producer_warps) threads.
  int producer_warps = 0;
  // Warps the image's kernel was compiled for where kilnc chose fewer than
  // the variant's num_warps (wgmma tiles a dot's M by warpgroups of four
  // warps, 16 rows each); 0: num_warps.
  int launch_warps = 0;
};

// One non-constexpr parameter of a kernel, in source order: the arguments of
// the generated launcher (a tuple parameter's elements one by one, named
// "stride[0]", ...). The compiled entry point takes those that are neither
// `equal_to_1` nor a constexpr element (`value`), in this order.
struct ParamInfo {
  // The Triton parameter name, e.g. "x_ptr".
  const char* name;
  // The Triton type: "*fp32" (pointer to fp32), "i32", "fp16", ...
  const char* type;
  // 16 when the variant assumes the argument divisible by 16 (for a pointer:
  // its address 16-byte aligned), else 1.
  int divisibility;
  // True when the variant was compiled for this integer argument equal to 1
  // (`:1`, or the build's unit-stride variant): the constant is folded into
  // the code, the launcher checks the argument and does not pass it.
  bool equal_to_1 = false;
  // For a constexpr element of a tuple parameter, the value the variant was
  // compiled with ("8", "True", "None"; `type` is the C++ slot's: an integer
  // type, "i1", or "none"): the launcher checks the argument and does not
  // pass it. Null for other parameters.
  const char* value = nullptr;
};

// One constexpr parameter of a kernel and the value it was compiled with.
struct ConstexprInfo {
  const char* name;
  // The value as written in the signature, e.g. "1024".
  const char* value;
};

// One compiled specialization of a kernel: argument types, divisibility
// assumptions, constexpr values and launch options, with a cubin per
// architecture.
struct VariantInfo {
  // Human-readable identity, used in errors: the named signature with the
  // launch options, e.g. "x_ptr=*fp32:16, ..., BLOCK=1024, num_warps=4".
  const char* name;
  // The entry point's symbol in the cubins.
  const char* entry;
  // The positional signature it was compiled with, e.g.
  // "*fp32:16, *fp32:16, *fp32:16, i32:16, 1024".
  const char* signature;
  // Launch options: a program is a block of 32 * num_warps threads; num_ctas
  // programs form a thread-block cluster.
  int num_warps;
  int num_stages;
  int num_ctas;
  // True when the variant assumes some argument divisible by 16; the
  // generated launcher checks the real arguments before choosing it.
  bool aligned;
  // The images: one cubin per architecture, then any PTX.
  const CubinImage* images;
  int num_images;
  // The kernel's non-constexpr parameters, in order (see ParamInfo for
  // which the entry point takes).
  const ParamInfo* params;
  int num_params;
  // The constexpr parameters and their values.
  const ConstexprInfo* constexprs;
  int num_constexprs;
  // FNV-1a 64 hash (hex) of the kernel's source file, and the compiler that
  // built the cubins, as the metadata recorded them.
  const char* source_hash;
  const char* compiler;
  // Runtime bookkeeping, owned by the runtime. Never null in generated code.
  internal::VariantCache* cache;
  // The index in a launch's argument array (`void** args`) of the entry
  // point's hidden global scratch parameter, after all the others: a 64-bit
  // device pointer to the images' global_scratch_bytes per program (CTA)
  // times the programs of the launch, program ctaid.x + ctaid.y * nctaid.x +
  // ctaid.z * nctaid.x * nctaid.y owning the id-th slice. Generated code
  // leaves the slot null; each launch points it at the buffer's address
  // (null when the chosen image's global_scratch_bytes is 0), from a buffer
  // the runtime keeps per stream. -1 when the entry point takes no such
  // parameter.
  int global_scratch_arg = -1;
};

// A Triton kernel with all its compiled variants.
struct KernelInfo {
  // The @triton.jit function's name.
  const char* name;
  const VariantInfo* variants;
  int num_variants;
  // For a kernel built with `autotune = True`: its key, configs, overloads
  // and embedded tuning tables (kiln/tuning.h); null otherwise.
  const KernelTuningInfo* tuning = nullptr;
};

}  // namespace kiln

#endif  // KILN_KERNEL_INFO_H_
