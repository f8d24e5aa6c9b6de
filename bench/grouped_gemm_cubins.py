"""Upstream Triton's tutorial 08, grouped GEMM (the file unchanged in
tests/realworld/tutorials/python/tutorials/08-grouped-gemm.py), its two
kernels under Triton 3.6's JIT and as Kiln cubins
(bench/build_grouped_gemm_cubins.sh), same config, same inputs, one
process; cuBLAS (one torch.matmul per GEMM of the group, the tutorial's
baseline) beside them.

Run on the GPU machine from the repository root:

    python3 bench/grouped_gemm_cubins.py --cubins .devbuild/grouped_gemm_cubins --out OUT_DIR

Groups, as the tutorial's benchmarks make them (4 GEMMs each, fp16 from
torch.rand): `square N` (M = N = K = N for every GEMM: the tutorial's
benchmark_square_matrices), `batch M` (M x 8192 times 8192 x 8192:
benchmark_batches), `mixed` (the tutorial's own check, 1024 / 512 / 256
/ 128 cubed) and `ragged` (extents that end mid-chunk, rows padded to whole
16-byte chunks holding 1000s, which loads must not read, and C's padding
checked unwritten; the TMA kernel only: the pointer kernel assumes whole
tiles). grouped_matmul_kernel reads B as K x N; grouped_matmul_tma_kernel
reads B^T (N x K), as the tutorial passes them. fp8 cubins run the TMA kernel
on the same values cast to e4m3.

Both run NUM_SM = 132 programs at the cubin's config (Triton through the
kernel's undecorated JITFunction, `.fn`, with the cubin's constexprs,
num_warps and num_stages; the tutorial autotunes). Outputs are checked
against torch.matmul with the tutorial's tolerance (atol = rtol = 1e-2;
fp8: against the fp32 product of the e4m3 inputs, rtol 2^-3 for C's
rounding to e4m3). Timing: triton.testing.do_bench, Kiln, Triton and
cuBLAS interleaved over --rounds rounds; Kiln/Triton is the median of the
per-round ratios of Triton's time to Kiln's (above 1: Kiln faster).
TFLOP/s count 2*M*N*K per GEMM of the group. Writes OUT_DIR/results.json
and results.md after every row. --kiln-only runs and checks each Kiln cubin
once per group, nothing else (for compute-sanitizer); --dump-triton DIR
writes what Triton compiled for each config, to read beside Kiln's;
--expect-trap checks that a misaligned base stops the TMA kernel.
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = os.path.join(REPO, "tests", "realworld", "tutorials", "python", "tutorials", "08-grouped-gemm.py")
_spec = importlib.util.spec_from_file_location("kiln_bench_matmul", os.path.join(REPO, "bench", "matmul.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)  # load_tutorial
_spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
cubin_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_launch)


def read_list(directory):
    entries = []
    for line in open(os.path.join(directory, "list.txt")):
        name, kernel, dtype, bm, bn, bk, warps, stages, num_sm = line.strip().split("|")
        entries.append(dict(name=name, kernel=kernel, dtype=dtype, BLOCK_SIZE_M=int(bm), BLOCK_SIZE_N=int(bn),
                            BLOCK_SIZE_K=int(bk), num_warps=int(warps), num_stages=int(stages),
                            NUM_SM=int(num_sm)))
    return entries


def group_values(a_ptrs, b_ptrs, c_ptrs, sizes, lds):
    """Kiln's arguments by name for a group's device arrays."""
    return dict(group_a_ptrs=a_ptrs.data_ptr(), group_b_ptrs=b_ptrs.data_ptr(), group_c_ptrs=c_ptrs.data_ptr(),
                group_gemm_sizes=sizes.data_ptr(), g_lds=lds.data_ptr(), group_size=len(sizes) // 3)


def constexprs(meta):
    out = {}
    for c in meta["constexprs"]:
        v = c["value"]
        out[c["name"]] = True if v == "True" else False if v == "False" else int(v)
    return out


def groups(names):
    """name -> list of (M, N, K)."""
    out = {}
    for name in names:
        kind, _, size = name.partition("_")
        if kind == "square":
            out[name] = [(int(size),) * 3] * 4
        elif kind == "batch":
            out[name] = [(int(size), 8192, 8192)] * 4
        elif kind == "mixed":
            out[name] = [(s, s, s) for s in (1024, 512, 256, 128)]
        elif kind == "ragged":
            out[name] = [(300, 200, 999), (129, 257, 77), (64, 136, 1000)]
        else:
            raise SystemExit(f"unknown group {name!r} (square_N, batch_M, mixed, ragged)")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", help="results directory (not with --kiln-only)")
    parser.add_argument("--groups", default="mixed,square_1024,square_2048,batch_256,batch_1024")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="keep cubins whose name contains one of these (comma-separated)")
    parser.add_argument("--kiln-only", action="store_true", help="run and check each Kiln cubin once per group")
    parser.add_argument("--expect-trap", action="store_true",
                        help="launch the first TMA cubin with A's pointers 2 bytes off their 16-byte alignment "
                             "and check that the kernel stops (tl.make_tensor_descriptor's contract); the "
                             "context is lost after it, so nothing else runs")
    parser.add_argument("--dump-triton", metavar="DIR",
                        help="also write Triton's TTGIR, PTX and cubin of each config to DIR/<name>.*")
    args = parser.parse_args()
    if not args.out and not args.kiln_only:
        parser.error("--out is needed")
    only = [o for o in args.only.split(",") if o]
    entries = [e for e in read_list(args.cubins) if not only or any(o in e["name"] for o in only)]
    shapes = groups(args.groups.split(","))

    import torch
    import triton
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    # tma_configs: the TMA kernel's autotune decorator reads it.
    mod = bench.load_tutorial(TUTORIAL, names=("tma_configs",))
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    device_sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name(0)}: {device_sms} SMs", flush=True)
    dtypes = {"fp16": torch.float16, "fp8e4nv": torch.float8_e4m3fn}
    rows = []
    wrong = checked = 0

    def make_group(dtype, shape_list):
        gen = torch.Generator(device="cuda").manual_seed(0)
        g = dict(A=[], B=[], BT=[], C=[], ref=[])
        # Rows padded to whole 16-byte chunks (the descriptors' strides
        # must be), the padding holding 1000s (C's: zeros) that a load
        # must not read and a store must not write; with extents that are
        # chunks already, no padding.
        chunk = 16 // (2 if dtype == "fp16" else 1)
        padded = lambda n: -(-n // chunk) * chunk
        for M, N, K in shape_list:
            a = torch.rand((M, K), device="cuda", dtype=torch.float16, generator=gen).to(dtypes[dtype])
            b = torch.rand((K, N), device="cuda", dtype=torch.float16, generator=gen).to(dtypes[dtype])
            a_rows = torch.full((M, padded(K)), 1000.0, device="cuda", dtype=torch.float16).to(dtypes[dtype])
            a_rows[:, :K] = a
            bt_rows = torch.full((N, padded(K)), 1000.0, device="cuda", dtype=torch.float16).to(dtypes[dtype])
            bt_rows[:, :K] = b.T
            c_rows = torch.zeros((M, padded(N)), device="cuda", dtype=torch.float16).to(dtypes[dtype])
            g["A"].append(a_rows[:, :K])
            g["B"].append(b)
            g["BT"].append(bt_rows[:, :K])
            g["C"].append(c_rows[:, :N])
            g.setdefault("C_rows", []).append(c_rows)
            g["ref"].append(torch.matmul(a.float(), b.float()) if dtype != "fp16" else torch.matmul(a, b).float())

        def arrays(bs):
            ptrs = lambda ts: torch.tensor([t.data_ptr() for t in ts], device="cuda")
            sizes = torch.tensor([v for (M, N, K) in shape_list for v in (M, N, K)], dtype=torch.int32,
                                 device="cuda")
            lds = torch.tensor([v for a, b, c in zip(g["A"], bs, g["C"]) for v in (a.stride(0), b.stride(0),
                                                                                 c.stride(0))],
                               dtype=torch.int32, device="cuda")
            return ptrs(g["A"]), ptrs(bs), ptrs(g["C"]), sizes, lds

        g["pointers"] = arrays(g["B"])
        g["tma"] = arrays(g["BT"])
        return g

    def close(dtype, outs, refs, rows):
        ok, err = True, 0.0
        for out, ref in zip(outs, refs):
            out = out.float()
            rtol = 0.125 if dtype == "fp8e4nv" else 1e-2
            ok &= bool(torch.allclose(out, ref.clamp(-448, 448) if dtype == "fp8e4nv" else ref, atol=1e-2,
                                      rtol=rtol))
            err = max(err, float((out - ref).abs().max()))
        # Nothing past each C's last column.
        for c, c_rows in zip(outs, rows):
            ok &= bool((c_rows[:, c.shape[1]:].float() == 0).all())
        return dict(ok=ok, max_abs_err=err)

    def write():
        os.makedirs(args.out, exist_ok=True)
        result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                      device_sms=device_sms, triton=triton.__version__, torch=torch.__version__,
                      rounds=args.rounds, rows=rows)
        json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
        with open(os.path.join(args.out, "results.md"), "w") as f:
            f.write(f"# Tutorial 08 grouped GEMM, Kiln cubins beside Triton {triton.__version__} "
                    f"({result['gpu']}, {device_sms} SMs, {result['date']})\n\n")
            f.write(f"NUM_SM = 132 programs for Kiln and Triton; one fixed config per cubin (the tutorial "
                    f"autotunes); cuBLAS: one torch.matmul per GEMM. Kiln/Triton: median of {args.rounds} "
                    "per-round ratios of Triton's time to Kiln's (above 1: Kiln faster).\n\n")
            f.write("| kernel | dtype | config | group | Triton TFLOP/s | Kiln TFLOP/s | cuBLAS TFLOP/s | "
                    "Kiln/Triton | correct (Kiln, Triton) | regs Kiln/Triton | spills Kiln/Triton |\n")
            f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                if "error" in r:
                    f.write(f"| {r['kernel']} | {r['dtype']} | {r['config']} | {r['group']} | {r['error']} |\n")
                    continue
                tf, c, k, t = r["tflops"], r["correct"], r["kiln"], r["triton"]
                f.write(f"| {r['kernel']} | {r['dtype']} | {r['config']} | {r['group']} | {tf['triton']:.1f} | "
                        f"{tf['kiln']:.1f} | {'%.1f' % tf['cublas'] if 'cublas' in tf else '—'} | "
                        f"{r['kiln_over_triton']:.3f} | {c['kiln']['ok']}, {c['triton']['ok']} | "
                        f"{k['registers']}/{t['registers']} | {k['spills']}/{t['spills']} |\n")

    def cell(entry, cubin, group_name, shape_list):
        nonlocal wrong, checked
        kernel, dtype = entry["kernel"], entry["dtype"]
        if group_name == "ragged" and kernel == "grouped_matmul_kernel":
            return  # it assumes whole tiles (the tutorial's comment)
        g = make_group(dtype, shape_list)
        form = "tma" if kernel == "grouped_matmul_tma_kernel" else "pointers"
        a_ptrs, b_ptrs, c_ptrs, sizes, lds = g[form]
        arguments = cubin.arguments(group_values(a_ptrs, b_ptrs, c_ptrs, sizes, lds))
        programs = entry["NUM_SM"]

        def kiln():
            cubin.launch((programs,), arguments, torch.cuda.current_stream().cuda_stream)

        def zero():
            for c in g["C"]:
                c.zero_()

        zero()
        kiln()
        torch.cuda.synchronize()
        kiln_check = close(dtype, g["C"], g["ref"], g["C_rows"])
        if args.kiln_only:
            print(f"{entry['name']} {group_name}: correct {kiln_check['ok']} "
                  f"(max |err| {kiln_check['max_abs_err']:.3g})", flush=True)
            wrong += not kiln_check["ok"]
            checked += 1
            return
        fn = getattr(mod, kernel).fn
        kwargs = dict(constexprs(cubin.meta), num_warps=cubin.meta["num_warps"],
                      num_stages=cubin.meta["num_stages"])
        upstream = lambda: fn[(programs,)](a_ptrs, b_ptrs, c_ptrs, sizes, lds, len(shape_list), **kwargs)
        zero()
        compiled = upstream()
        torch.cuda.synchronize()
        if args.dump_triton:
            cubin_launch.write_triton_asm(compiled, args.dump_triton, entry["name"])
        checks = dict(kiln=kiln_check, triton=close(dtype, g["C"], g["ref"], g["C_rows"]))
        cublas = (lambda: [torch.matmul(a, b) for a, b in zip(g["A"], g["B"])]) if dtype == "fp16" else None
        times, tf, ratio = cubin_launch.time_interleaved(
            dict(kiln=kiln, triton=upstream, cublas=cublas), args.rounds,
            sum(2 * M * N * K for M, N, K in shape_list) * 1e-9)
        rows.append(dict(name=entry["name"], kernel=kernel, dtype=dtype, group=group_name, shapes=shape_list,
                         config=config_text(entry), correct=checks, tflops=tf, ms=times, kiln_over_triton=ratio,
                         kiln=dict(registers=cubin.meta.get("registers"), spills=cubin.meta.get("spills")),
                         triton=dict(registers=compiled.n_regs, spills=compiled.n_spills)))
        print(f"{entry['name']} {group_name}: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} "
              f"cublas {tf.get('cublas', 0):.1f} TFLOP/s  kiln/triton {ratio:.3f}  "
              f"correct {({k: v['ok'] for k, v in checks.items()})}", flush=True)

    if args.expect_trap:
        entry = next(e for e in entries if e["kernel"] == "grouped_matmul_tma_kernel")
        cubin = cubin_launch.Cubin(cuda, args.cubins, entry["name"])
        g = make_group(entry["dtype"], shapes[next(iter(shapes))])
        a_ptrs, b_ptrs, c_ptrs, sizes, lds = g["tma"]
        a_ptrs = a_ptrs + 2  # one fp16 element past each A's base
        arguments = cubin.arguments(group_values(a_ptrs, b_ptrs, c_ptrs, sizes, lds))
        cubin.launch((entry["NUM_SM"],), arguments, torch.cuda.current_stream().cuda_stream)
        result = cuda.cuCtxSynchronize()
        print(f"{entry['name']} with misaligned A: cuCtxSynchronize -> CUresult {result} "
              f"({'stopped, as expected' if result != 0 else 'RAN: the contract was not checked'})", flush=True)
        raise SystemExit(0 if result != 0 else 1)
    for entry in entries:
        cubin = cubin_launch.Cubin(cuda, args.cubins, entry["name"])
        for group_name, shape_list in shapes.items():
            try:
                cell(entry, cubin, group_name, shape_list)
            except Exception as e:  # a failed launch or compile is a row, not the end of the run
                print(f"{entry['name']} {group_name}: ERROR {e!r}", flush=True)
                rows.append(dict(name=entry["name"], kernel=entry["kernel"], dtype=entry["dtype"],
                                 group=group_name, config=config_text(entry), error=repr(e)[:300]))
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
            f"w{entry['num_warps']} s{entry['num_stages']}")


if __name__ == "__main__":
    main()
