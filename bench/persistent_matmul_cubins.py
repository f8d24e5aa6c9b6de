"""Upstream Triton's tutorial 09, persistent matmul (the file unchanged in
tests/realworld/tutorials/python/tutorials/09-persistent-matmul.py), its five
kernels under Triton 3.6's JIT and as Kiln cubins
(bench/build_persistent_matmul_cubins.sh), same config, same inputs, one
process; cuBLAS beside them.

Run on the GPU machine from the repository root:

    python3 bench/persistent_matmul_cubins.py --cubins .devbuild/persistent_matmul_cubins --out OUT_DIR

Kernels, launched as the tutorial's host code launches them: matmul_kernel
(one program per tile) and matmul_kernel_persistent (min(NUM_SMS, tiles)
programs) on pointers, B passed as b.T of an N x K tensor;
matmul_kernel_tma and matmul_kernel_tma_persistent on host tensor
descriptors (Triton: triton.tools.tensor_descriptor.TensorDescriptor; Kiln:
the descriptor's base, extents and strides, and a zero tensor map unless the
cubin's metadata asks for one); matmul_kernel_descriptor_persistent, whose
descriptors are made in the kernel (Triton's need triton.set_allocator;
Kiln lowers them to ordinary loads and stores and needs no scratch). The
tutorial autotunes every kernel; here each runs at the one config its cubin
was compiled for, Triton with the cubin's constexprs (NUM_SMS = 132, the
H100 SXM's and H200's SM count, for both), num_warps and num_stages through
the kernel's undecorated JITFunction (`.fn`).

Inputs are the tutorial's: torch.randn in fp16, cast to the dtype, B made
N x K. Before timing, Kiln's and Triton's outputs are checked against the
reference with the tutorial's tolerance, torch.allclose(..., atol=1.0):
for fp16 the reference is torch.matmul(a, b.T); for fp8 (which torch does
not multiply) it is the fp32 product of the same fp8 inputs, clamped to
e4m3's +-448 (both compilers convert with satfinite), with rtol 2^-4 added
for the rounding of C to e4m3 (3 mantissa bits). Kiln's output is also
checked against Triton's (fp8: rtol 2^-3, one e4m3 step). Timing:
triton.testing.do_bench, Kiln, Triton and cuBLAS interleaved over --rounds
rounds; Kiln/Triton is the median of the per-round ratios of Triton's time
to Kiln's (above 1: Kiln faster). cuBLAS is the tutorial's own
(triton's CublasLt, C in the operands' type), or torch's (torch.matmul;
torch._scaled_mm with C in fp16 for fp8) where that is missing. Writes
OUT_DIR/results.json and OUT_DIR/results.md after every row, so a run cut
short keeps what it measured; a kernel kilnc rejected (NAME.log beside the
cubins) is a row with its error.

--check-args builds every cubin's argument list from its metadata for every
size, with made-up addresses, without CUDA, torch or Triton, and prints it:
the form to run where the cubins are built. --kiln-only runs each Kiln
cubin once per size and checks it, nothing else (for compute-sanitizer).
--only NAME[,NAME...] keeps the cubins whose name contains one of the NAMEs.
--triton-warp-specialize runs Triton's matmul_kernel_descriptor_persistent
as the tutorial's benchmark does on Hopper when it turns warp specialization
on (WARP_SPECIALIZE=True, FLATTEN=False; the tutorial skips the other
kernels' warp-specialized forms on Hopper); Kiln's cubins run as built.
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os
import sys
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(REPO, "tests", "realworld", "tutorials", "python", "tutorials", "09-persistent-matmul.py")
NUM_SMS = 132
_spec = importlib.util.spec_from_file_location("kiln_bench_matmul", os.path.join(REPO, "bench", "matmul.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)  # load_tutorial
_spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
cubin_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_launch)

POINTER_KERNELS = ("matmul_kernel", "matmul_kernel_persistent", "matmul_kernel_descriptor_persistent")
HOST_DESCRIPTOR_KERNELS = ("matmul_kernel_tma", "matmul_kernel_tma_persistent")
PERSISTENT_KERNELS = ("matmul_kernel_persistent", "matmul_kernel_tma_persistent",
                      "matmul_kernel_descriptor_persistent")


def read_list(directory):
    """The cubins of list.txt, as dicts."""
    entries = []
    for line in open(os.path.join(directory, "list.txt")):
        name, kernel, dtype, bm, bn, bk, group, warps, stages, num_sms = line.strip().split("|")
        entries.append(dict(name=name, kernel=kernel, dtype=dtype, BLOCK_SIZE_M=int(bm), BLOCK_SIZE_N=int(bn),
                            BLOCK_SIZE_K=int(bk), GROUP_SIZE_M=int(group), num_warps=int(warps),
                            num_stages=int(stages), NUM_SMS=int(num_sms)))
    return entries


def constexprs(meta):
    """The cubin's constexprs as Python values, for Triton's call."""
    out = {}
    for c in meta["constexprs"]:
        v = c["value"]
        out[c["name"]] = True if v == "True" else False if v == "False" else int(v)
    return out


def grid(entry, M, N):
    tiles = -(-M // entry["BLOCK_SIZE_M"]) * -(-N // entry["BLOCK_SIZE_N"])
    return min(entry["NUM_SMS"], tiles) if entry["kernel"] in PERSISTENT_KERNELS else tiles


def kiln_values(kernel, a, b, c, M, N, K):
    """Kiln's arguments by name for addresses a (M x K), b (N x K) and c
    (M x N), all row-major, as the tutorial passes them: the pointer
    kernels see B as b.T (strides 1, K)."""
    if kernel in HOST_DESCRIPTOR_KERNELS:
        T = cubin_launch.TensorDescriptor
        return dict(a_desc=T(a, [M, K], [K, 1]), b_desc=T(b, [N, K], [K, 1]), c_desc=T(c, [M, N], [N, 1]),
                    M=M, N=N, K=K)
    values = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K)
    if kernel != "matmul_kernel_descriptor_persistent":
        values.update(stride_am=K, stride_ak=1, stride_bk=1, stride_bn=K, stride_cm=N, stride_cn=1)
    return values


def check_args(args, entries, sizes):
    """Packs every argument list without CUDA and prints it."""
    failed = 0
    for entry in entries:
        meta = json.load(open(os.path.join(args.cubins, entry["name"] + ".json")))
        expect = {k: entry[k] for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M")}
        if entry["kernel"] in PERSISTENT_KERNELS:
            expect["NUM_SMS"] = entry["NUM_SMS"]
        got = constexprs(meta)
        for size in sizes:
            M = N = K = size
            try:
                assert meta["kernel"] == entry["kernel"], meta["kernel"]
                assert all(got.get(k) == v for k, v in expect.items()), (got, expect)
                assert (meta["num_warps"], meta["num_stages"]) == (entry["num_warps"], entry["num_stages"])
                # Made-up, 256-byte-aligned addresses.
                holders = cubin_launch.pack_arguments(meta, kiln_values(entry["kernel"], 0x10000000, 0x20000000,
                                                                        0x30000000, M, N, K))
                described = [f"{type(h).__name__}[{ctypes.sizeof(h)}]" if ctypes.sizeof(h) > 8 else
                             f"{type(h).__name__}({h.value:#x})" if h.value >= 0x10000000 else
                             f"{type(h).__name__}({h.value})" for h in holders]
                print(f"{entry['name']} {size}^3: grid ({grid(entry, M, N)},) x {32 * meta['num_warps']} threads, "
                      f"{meta['shared_bytes']} B shared, {len(holders)} arguments "
                      f"({sum(ctypes.sizeof(h) for h in holders)} B): {', '.join(described)}")
            except (AssertionError, KeyError) as e:
                failed += 1
                print(f"{entry['name']} {size}^3: FAILED {e!r}")
    for name in rejected(args.cubins):
        print(f"{name}: kilnc rejected it ({name}.log)")
    raise SystemExit(1 if failed else 0)


def rejected(directory):
    """The kernels kilnc rejected: NAME.log the build script left."""
    return sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".log"))


def load_tutorial():
    """The tutorial as a module (bench/matmul.py's load_tutorial). It imports
    triton.profiler for its benchmark, which the kernels never call: a stub
    stands in where proton is missing."""
    try:
        import triton.profiler  # noqa: F401
    except ImportError:
        sys.modules["triton.profiler"] = types.ModuleType("triton.profiler")
    return bench.load_tutorial(TUTORIAL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", help="results directory (not with --check-args or --kiln-only)")
    parser.add_argument("--sizes", default="4096,8192", help="M=N=K each")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="keep cubins whose name contains one of these (comma-separated)")
    parser.add_argument("--dump-triton", metavar="DIR",
                        help="also write Triton's TTGIR, PTX and cubin of each timed config to DIR/<name>.*")
    parser.add_argument("--check-args", action="store_true",
                        help="build every argument list from the metadata, without CUDA, and print it")
    parser.add_argument("--kiln-only", action="store_true",
                        help="run and check each Kiln cubin once per size (for compute-sanitizer)")
    parser.add_argument("--triton-warp-specialize", action="store_true",
                        help="Triton's descriptor_persistent kernel with WARP_SPECIALIZE=True, FLATTEN=False "
                             "(the tutorial's Hopper form)")
    args = parser.parse_args()
    sizes = [int(z) for z in args.sizes.split(",")]
    only = [o for o in args.only.split(",") if o]
    entries = [e for e in read_list(args.cubins) if not only or any(o in e["name"] for o in only)]
    if args.check_args:
        check_args(args, entries, sizes)
    if not args.out and not args.kiln_only:
        parser.error("--out is needed")

    import torch
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    mod = load_tutorial()
    # Device-made descriptors (matmul_kernel_descriptor_persistent): Triton
    # writes their tensor maps to global scratch from this allocator.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    device_sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)}: {device_sms} SMs; NUM_SMS = {NUM_SMS} for Kiln and Triton", flush=True)
    try:
        from triton._C.libtriton import nvidia
        workspace = torch.empty(32 * 1024 * 1024, device="cuda", dtype=torch.uint8)
        blas, blas_name = nvidia.cublas.CublasLt(workspace), "cuBLASLt (tutorial's)"
    except Exception:  # older Triton, or no cuBLASLt: torch's cuBLAS instead
        blas, blas_name = None, "torch"
    dtypes = {"fp16": torch.float16, "fp8e4nv": torch.float8_e4m3fn}
    rows = []
    wrong = checked = 0
    inputs = {}

    def make_inputs(dtype, size):
        """A (M x K), B (N x K) as the tutorial makes them, and the reference."""
        key = (dtype, size)
        if key not in inputs:
            inputs.clear()
            gen = torch.Generator(device="cuda").manual_seed(0)
            a = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen).to(dtypes[dtype])
            b = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen).T.contiguous()
            b = b.to(dtypes[dtype])
            if dtype == "fp16":
                ref = torch.matmul(a, b.T).float()
            else:
                ref = torch.matmul(a.float(), b.float().T).clamp(-448, 448)
            inputs[key] = a, b, ref
        return inputs[key]

    def close(dtype, out, expected, against_triton=False):
        rtol = (0.125 if against_triton else 0.0625) if dtype == "fp8e4nv" else 1e-5
        out = out.float()
        return dict(ok=bool(torch.allclose(out, expected.float(), atol=1.0, rtol=rtol)),
                    max_abs_err=float((out - expected.float()).abs().max()))

    def write():
        os.makedirs(args.out, exist_ok=True)
        result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                      device_sms=device_sms, num_sms=NUM_SMS, triton=triton.__version__,
                      torch=torch.__version__, cublas=blas_name, rounds=args.rounds,
                      triton_warp_specialize=args.triton_warp_specialize, rows=rows)
        json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(f"# Tutorial 09 persistent matmul, Kiln cubins beside Triton {triton.__version__} "
                    f"({result['gpu']}, {device_sms} SMs, {result['date']})\n\n")
            f.write(f"NUM_SMS = {NUM_SMS} for Kiln and Triton; one fixed config per kernel (the tutorial "
                    f"autotunes); cuBLAS: {blas_name}. Kiln/Triton: median of {args.rounds} per-round ratios "
                    "of Triton's time to Kiln's (above 1: Kiln faster)."
                    + (" Triton's matmul_kernel_descriptor_persistent runs warp-specialized (WARP_SPECIALIZE=True, "
                       "FLATTEN=False, the tutorial's Hopper form); Kiln's cubins as built." if args.triton_warp_specialize
                       else "") + "\n\n")
            f.write("| kernel | dtype | config | M=N=K | Triton TFLOP/s | Kiln TFLOP/s | cuBLAS TFLOP/s | Kiln/Triton "
                    "| correct (Kiln, Triton, Kiln~Triton) | regs Kiln/Triton | spills Kiln/Triton "
                    "| shared B Kiln/Triton |\n")
            f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                if "error" in r:
                    f.write(f"| {r['kernel']} | {r['dtype']} | {r['config']} | {r['size']} | {r['error']} |\n")
                    continue
                tf = r["tflops"]
                c = r["correct"]
                k, t = r["kiln"], r["triton"]
                f.write(f"| {r['kernel']} | {r['dtype']} | {r['config']} | {r['size']} | {tf['triton']:.1f} | "
                        f"{tf['kiln']:.1f} | {'%.1f' % tf['cublas'] if 'cublas' in tf else '—'} | "
                        f"{r['kiln_over_triton']:.3f} | {c['kiln']['ok']}, {c['triton']['ok']}, "
                        f"{c['kiln_vs_triton']['ok']} | {k['registers']}/{t['registers']} | "
                        f"{k['spills']}/{t['spills']} | {k['shared_bytes']}/{t['shared_bytes']} |\n")

    def cell(entry, cubin, size):
        """Checks (and unless --kiln-only, times) one cubin at one size beside
        Triton's kernel with the same config; appends a row."""
        nonlocal wrong, checked
        kernel, dtype = entry["kernel"], entry["dtype"]
        M = N = K = size
        a, b, ref = make_inputs(dtype, size)
        c = torch.empty((M, N), device="cuda", dtype=dtypes[dtype])
        arguments = cubin.arguments(kiln_values(kernel, a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K))
        programs = grid(entry, M, N)

        def kiln():
            cubin.launch((programs,), arguments, torch.cuda.current_stream().cuda_stream)

        if args.kiln_only:
            c.zero_()
            kiln()
            torch.cuda.synchronize()
            check = close(dtype, c, ref)
            print(f"{entry['name']} {size}^3: correct {check['ok']} (max |err| {check['max_abs_err']:.3g})", flush=True)
            wrong += not check["ok"]
            checked += 1
            return

        fn = getattr(mod, kernel).fn  # the JITFunction under the autotuner
        kwargs = dict(constexprs(cubin.meta), num_warps=cubin.meta["num_warps"], num_stages=cubin.meta["num_stages"])
        if args.triton_warp_specialize and kernel == "matmul_kernel_descriptor_persistent":
            # "Hopper warpspec doesn't work with flatten" (the tutorial's host code).
            kwargs.update(WARP_SPECIALIZE=True, FLATTEN=False)
        bm, bn, bk = entry["BLOCK_SIZE_M"], entry["BLOCK_SIZE_N"], entry["BLOCK_SIZE_K"]
        if kernel in HOST_DESCRIPTOR_KERNELS:
            # EPILOGUE_SUBTILE stores c in halves (the tutorial's pre_hook).
            cbn = bn // 2 if kwargs.get("EPILOGUE_SUBTILE") else bn
            descs = (TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bn, bk]),
                     TensorDescriptor.from_tensor(c, [bm, cbn]))
            upstream = lambda: fn[(programs,)](*descs, M, N, K, **kwargs)
        elif kernel == "matmul_kernel_descriptor_persistent":
            upstream = lambda: fn[(programs,)](a, b, c, M, N, K, **kwargs)
        else:
            bt = b.T
            upstream = lambda: fn[(programs,)](a, bt, c, M, N, K, a.stride(0), a.stride(1), bt.stride(0),
                                               bt.stride(1), c.stride(0), c.stride(1), **kwargs)
        cublas = None
        if blas is not None:
            c_blas = torch.empty((M, N), device="cuda", dtype=dtypes[dtype])
            cublas = lambda: blas.matmul(a, b, c_blas)
        elif dtype == "fp16":
            cublas = lambda: torch.matmul(a, b.T)
        else:
            one = torch.ones((), device="cuda")
            cublas = lambda: torch._scaled_mm(a, b.T, scale_a=one, scale_b=one, out_dtype=torch.float16)

        # Triton first: a Kiln kernel that faults takes the context with it.
        # Where Triton cannot warp-specialize the kernel on this GPU (the
        # tutorial runs only descriptor_persistent so on Hopper), it runs
        # without, and the row says so.
        c.zero_()
        triton_ws = kwargs.get("WARP_SPECIALIZE", False)
        try:
            compiled = upstream()
        except Exception as e:
            if not triton_ws:
                raise
            print(f"{entry['name']}: Triton with WARP_SPECIALIZE=True failed ({e!r:.120}); without", flush=True)
            kwargs["WARP_SPECIALIZE"] = triton_ws = False
            compiled = upstream()
        torch.cuda.synchronize()
        if args.dump_triton:
            cubin_launch.write_triton_asm(compiled, args.dump_triton, entry["name"])
        triton_out = c.clone()
        c.zero_()
        kiln()
        torch.cuda.synchronize()
        checks = dict(kiln=close(dtype, c, ref), triton=close(dtype, triton_out, ref),
                      kiln_vs_triton=close(dtype, c, triton_out, against_triton=True))
        del triton_out
        times, tf, ratio = cubin_launch.time_interleaved(
            dict(kiln=kiln, triton=upstream, cublas=cublas), args.rounds, 2 * M * N * K * 1e-9)
        rows.append(dict(name=entry["name"], kernel=kernel, dtype=dtype, size=size, config=config_text(entry),
                         grid=programs, correct=checks, tflops=tf, ms=times, kiln_over_triton=ratio,
                         triton_warp_specialize=triton_ws,
                         kiln=dict(registers=cubin.meta.get("registers"), spills=cubin.meta.get("spills"),
                                   shared_bytes=cubin.shared),
                         triton=dict(registers=compiled.n_regs, spills=compiled.n_spills,
                                     shared_bytes=compiled.metadata.shared)))
        print(f"{entry['name']} {size}^3: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} "
              f"cublas {tf['cublas']:.1f} TFLOP/s  kiln/triton {ratio:.3f}  "
              f"correct {({k: v['ok'] for k, v in checks.items()})}", flush=True)

    for name in rejected(args.cubins):
        if not only or any(o in name for o in only):
            log = open(os.path.join(args.cubins, name + ".log")).read().splitlines()
            errors = [line for line in log if "error" in line] or log[-1:] or ["(no message)"]
            rows.append(dict(name=name, kernel=name, dtype="", size="", config="",
                             error="kilnc rejected it: " + errors[0].strip()))
    for entry in entries:
        cubin = cubin_launch.Cubin(cuda, args.cubins, entry["name"])
        for size in sizes:
            try:
                cell(entry, cubin, size)
            except Exception as e:  # a failed launch or compile is a row, not the end of the run
                print(f"{entry['name']} {size}^3: ERROR {e!r}", flush=True)
                rows.append(dict(name=entry["name"], kernel=entry["kernel"], dtype=entry["dtype"], size=size,
                                 config=config_text(entry), error=repr(e)[:300]))
                wrong += 1
            if not args.kiln_only:
                write()
        cubin.unload()
    if args.kiln_only:
        print(f"{checked - wrong} passed, {wrong} failed")
        raise SystemExit(1 if wrong else 0)
    write()


def config_text(entry):
    return (f"{entry['BLOCK_SIZE_M']}x{entry['BLOCK_SIZE_N']}x{entry['BLOCK_SIZE_K']} "
            f"w{entry['num_warps']} s{entry['num_stages']}"
            + (f" g{entry['GROUP_SIZE_M']}" if entry["GROUP_SIZE_M"] != 8 else "")
            + (" subtile" if "_subtile" in entry["name"] else "")
            + (" ws" if entry["name"].endswith("_ws") else ""))


if __name__ == "__main__":
    main()
