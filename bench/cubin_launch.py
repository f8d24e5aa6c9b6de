"""Launching kilnc's cubins from Python through the CUDA driver (ctypes), for
the benches that time them beside Triton: load a cubin and its metadata,
pack the entry point's arguments, launch on torch's current stream, and time
them beside Triton the same way in every bench (time_interleaved). A cubin
whose metadata has "global_scratch_bytes" takes one more argument after all
others, the global scratch pointer, which Cubin.launch sets for its grid."""
import collections
import ctypes
import json
import os
import re
import statistics

# A `tensordesc<T[...]>` argument: the base address and the extents and
# strides in elements, outermost first (the last stride is 1).
TensorDescriptor = collections.namedtuple("TensorDescriptor", ["base", "shape", "strides"])

_ELEMENT_BYTES = {"fp8e4nv": 1, "fp8e5": 1, "i8": 1, "u8": 1, "fp16": 2, "bf16": 2, "i16": 2, "u16": 2,
                  "fp32": 4, "i32": 4, "u32": 4, "fp64": 8, "i64": 8, "u64": 8}
# CUtensorMapDataType, as the runtime maps element types (runtime/kiln/internal/tensor_map.cc).
_TENSOR_MAP_TYPE = {"u8": 0, "i8": 0, "fp8e4nv": 0, "fp8e5": 0, "u16": 1, "i16": 1, "u32": 2, "i32": 3,
                    "u64": 4, "i64": 5, "fp16": 6, "fp32": 7, "fp64": 8, "bf16": 9}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}  # bytes -> CUtensorMapSwizzle


def add_triton_mma_v2_option(parser):
    """--triton-mma-v2: Triton on its mma.sync path, for the benches that
    time Kiln's sm_90 (mma.sync) cubins beside it (use_triton_mma_v2)."""
    parser.add_argument("--triton-mma-v2", action="store_true",
                        help="run Triton with DISABLE_MMA_V3=1: its mma.sync path (what it runs on sm_80-89), "
                             "to compare with Kiln's sm_90 (mma.sync) cubins on a Hopper GPU")


def use_triton_mma_v2(args):
    """Before Triton compiles: DISABLE_MMA_V3=1 where --triton-mma-v2 asks
    (Triton's compiler reads it; it is part of its cache key)."""
    if args.triton_mma_v2:
        os.environ["DISABLE_MMA_V3"] = "1"


def time_interleaved(runs, rounds, gflop):
    """Times `runs` (name -> function; None leaves that name out; "kiln" and
    "triton" among them) with triton.testing.do_bench, each in turn,
    interleaved over `rounds` rounds so that a clock or thermal drift moves
    them alike. Returns (ms: name -> the rounds' times, tflops: name -> `gflop`
    over the median time, the median of the per-round ratios of Triton's time
    to Kiln's: above 1, Kiln is faster)."""
    import triton.testing

    timed = {name: fn for name, fn in runs.items() if fn is not None}
    ms = {name: [] for name in timed}
    for _ in range(rounds):
        for name, fn in timed.items():
            ms[name].append(triton.testing.do_bench(fn))
    tflops = {name: gflop / statistics.median(t) for name, t in ms.items()}
    ratio = statistics.median(t / k for k, t in zip(ms["kiln"], ms["triton"]))
    return ms, tflops, ratio


def write_triton_asm(compiled, directory, name):
    """Writes what Triton compiled beside Kiln's cubin, to read its SASS:
    DIRECTORY/NAME.ttgir, .ptx and .cubin (the benches' --dump-triton)."""
    os.makedirs(directory, exist_ok=True)
    for stage in ("ttgir", "ptx"):
        with open(os.path.join(directory, f"{name}.{stage}"), "w") as f:
            f.write(compiled.asm[stage])
    with open(os.path.join(directory, f"{name}.cubin"), "wb") as f:
        f.write(compiled.asm["cubin"])


def parse_tensordesc(type_name):
    """`tensordesc<fp16[128,64]>` -> ("fp16", [128, 64]); None for other types."""
    match = re.fullmatch(r"tensordesc<(\w+)\[([\d,]+)\]>", type_name)
    if not match:
        return None
    return match.group(1), [int(d) for d in match.group(2).split(",")]


def _tensor_map(cuda, element, desc, tensor_map):
    """The 128 bytes of cuTensorMapEncodeTiled for `desc`, with the box and
    swizzle of the metadata's "tensor_map" and the rest as the runtime encodes
    them (docs/architecture.md, Tensor descriptors)."""
    rank = len(desc.shape)
    size = _ELEMENT_BYTES[element]
    dims = (ctypes.c_uint64 * rank)(*reversed(desc.shape))
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*[s * size for s in reversed(desc.strides[:-1])])
    box = (ctypes.c_uint32 * rank)(*reversed(tensor_map["box"]))
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    raw = (ctypes.c_ubyte * 192)()  # a CUtensorMap is 64-byte aligned
    address = (ctypes.addressof(raw) + 63) // 64 * 64
    result = cuda.cuTensorMapEncodeTiled(
        ctypes.c_void_p(address), _TENSOR_MAP_TYPE[element], rank, ctypes.c_void_p(desc.base), dims, strides,
        box, ones, 0, _SWIZZLE[tensor_map["swizzle"]], 2, 0)  # no interleave, L2 128 B, fill zero
    assert result == 0, f"cuTensorMapEncodeTiled: CUresult {result}"
    return (ctypes.c_ubyte * 128).from_buffer_copy(ctypes.string_at(address, 128))


def pack_arguments(meta, values, cuda=None):
    """The entry point's arguments for `values` (name -> Python value), in
    the metadata's order, as ctypes holders; `:1` parameters are checked,
    not passed. A `tensordesc` parameter takes a TensorDescriptor and
    becomes its 2 + 2r ABI parameters (docs/architecture.md): the 128-byte
    tensor map (zeros unless the metadata has "tensor_map"; encoding one
    needs `cuda`), the base, the extents (i32) and the strides (i64). The
    launcher's checks on descriptors are asserted. The global scratch
    pointer is not among them (it depends on the grid: Cubin.arguments adds
    it)."""
    holders = []
    for p in meta["params"]:
        value = values[p["name"]]
        if p.get("equal_to_1"):
            assert value == 1, p["name"]
            continue
        desc_type = parse_tensordesc(p["type"])
        if desc_type:
            element, block = desc_type
            desc = TensorDescriptor(*value)
            size = _ELEMENT_BYTES[element]
            assert len(desc.shape) == len(desc.strides) == len(block), p["name"]
            assert desc.base and desc.base % 16 == 0, (p["name"], "base not 16-byte aligned")
            assert desc.strides[-1] == 1, (p["name"], "last stride not 1")
            assert all(s > 0 and s * size % 16 == 0 for s in desc.strides[:-1]), (p["name"], desc.strides)
            assert all(1 <= e < 2 ** 31 for e in desc.shape), (p["name"], desc.shape)
            if p.get("divisibility") == 16:  # the variant assumes its extents multiples of 16
                assert all(e % 16 == 0 for e in desc.shape), (p["name"], desc.shape)
            if "tensor_map" in p:
                assert cuda is not None, (p["name"], "a tensor map is encoded through the driver")
                holders.append(_tensor_map(cuda, element, desc, p["tensor_map"]))
            else:
                holders.append((ctypes.c_ubyte * 128)())
            holders.append(ctypes.c_uint64(desc.base))
            holders += [ctypes.c_int32(e) for e in desc.shape]
            holders += [ctypes.c_int64(s) for s in desc.strides]
        elif p["type"].startswith("*"):
            holders.append(ctypes.c_uint64(value))
        elif p["type"] == "fp32":
            holders.append(ctypes.c_float(value))
        elif p["type"] in ("i64", "u64"):
            holders.append(ctypes.c_int64(value))
        else:
            holders.append(ctypes.c_int32(value))
    return holders


class Cubin:
    """NAME.cubin and NAME.json of DIRECTORY, loaded into the current
    context. `shared` is the dynamic shared memory every launch requests
    (opted in past 48 KiB)."""

    def __init__(self, cuda, directory, name):
        self.cuda = cuda
        self.meta = json.load(open(os.path.join(directory, name + ".json")))
        self.module, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        image = open(os.path.join(directory, name + ".cubin"), "rb").read()
        assert cuda.cuModuleLoadData(ctypes.byref(self.module), image) == 0
        assert cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.module, self.meta["entry"].encode()) == 0
        self.shared = self.meta["shared_bytes"]
        # The warps the kernel was compiled for (launch_warps, where kilnc
        # chose fewer than the config's num_warps for wgmma), and a
        # warp-specialized kernel's producer warps beyond them.
        warps = self.meta.get("launch_warps", self.meta["num_warps"])
        self.threads = 32 * (warps + self.meta.get("producer_warps", 0))
        if self.shared > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            assert cuda.cuFuncSetAttribute(self.fn, 8, self.shared) == 0
        # KILN_BENCH_CARVEOUT=PERCENT sets the preferred shared-memory
        # carveout (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT): an
        # experiment's way to hold a kernel to fewer blocks per SM.
        if os.environ.get("KILN_BENCH_CARVEOUT"):
            assert cuda.cuFuncSetAttribute(self.fn, 9, int(os.environ["KILN_BENCH_CARVEOUT"])) == 0
        # Bytes of global scratch per program (CTA) when the entry point takes
        # the pointer (docs/architecture.md, Variant metadata), else None;
        # the buffers, per size, live as long as the Cubin, so that timed
        # launches (and graphs captured from them) allocate nothing.
        self.scratch = self.meta.get("global_scratch_bytes")
        self._scratch_buffers = {}

    def arguments(self, values):
        """The kernel-parameter array for `values` (name -> Python value),
        in the metadata's order (pack_arguments), then the global scratch
        pointer's slot if the entry point takes one (launch() fills it)."""
        holders = pack_arguments(self.meta, values, self.cuda)
        if self.scratch is not None:
            holders.append(ctypes.c_uint64(0))
        pointers = (ctypes.c_void_p * max(1, len(holders)))(
            *[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        return holders, pointers

    def scratch_address(self, programs):
        """The address of a global scratch buffer for `programs` CTAs, a torch
        uint8 tensor kept for later launches of that size; 0 when the cubin
        uses none."""
        if not self.scratch:
            return 0
        size = max(1, self.scratch * programs)
        if size not in self._scratch_buffers:
            import torch
            self._scratch_buffers[size] = torch.zeros(size, dtype=torch.uint8, device="cuda")
        return self._scratch_buffers[size].data_ptr()

    def launch(self, grid, arguments, stream):
        """Launches on `stream` (a CUstream handle) with `arguments` from
        arguments(); grid is (x, y, z) or fewer."""
        x, y, z = (tuple(grid) + (1, 1))[:3]
        if self.scratch is not None:
            arguments[0][-1].value = self.scratch_address(x * y * z)
        assert self.cuda.cuLaunchKernel(self.fn, x, y, z, self.threads, 1, 1, self.shared,
                                        ctypes.c_void_p(stream), arguments[1], None) == 0

    def unload(self):
        self.cuda.cuModuleUnload(self.module)
