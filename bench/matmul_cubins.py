"""Upstream Triton's tutorial 03 (matmul_kernel, the file unchanged) under
Triton 3.6's JIT and as Kiln cubins (bench/build_matmul_cubins.sh: the
tutorial's unit strides `:1`, the rest 16-divisible; sm_90a wgmma and sm_90
mma.sync), same config, same inputs, one process; cuBLAS beside them.

Run on the GPU machine from the repository root:

    python3 bench/matmul_cubins.py --cubins .devbuild/matmul_cubins --out OUT_DIR

Each cubin is launched through the CUDA driver (ctypes) with its metadata's
entry-point arguments (`:1` arguments are not passed). Before timing, each
output is checked as the tutorial does, torch.allclose(out, torch_out,
atol=1e-2, rtol=0) (0.125 for fp8), with bench/matmul.py's inputs (scaled so
that C's entries are about 1). Timing: triton.testing.do_bench, Kiln and
Triton interleaved over --rounds rounds; the ratio is the median of the
per-round ratios. Writes OUT_DIR/results.json and OUT_DIR/results.md.

--kiln-only runs each Kiln cubin once per size and checks it, nothing else
(no Triton, cuBLAS or timing, no files): the form to run under
compute-sanitizer, e.g.

    compute-sanitizer --tool racecheck python3 bench/matmul_cubins.py \
        --cubins .devbuild/matmul_cubins --out /tmp/x --sizes 512 --kiln-only

It exits 1 if an output is wrong.

--only NAME[,NAME...] keeps the list's cubins whose name contains one of the
NAMEs (with --every-config, also of the list's configs, named
<dtype>_sm_90a_config<N>). --profile runs each kept cubin and Triton's kernel for the same config
once per size after one warm-up launch each (no timing, no files): the form
to run under Nsight Compute, e.g.

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
        python3 bench/matmul_cubins.py --cubins .devbuild/matmul_cubins --out /tmp/x \
        --only fp16_sm_90a_128x256 --sizes 8192 --profile

--asm DIR writes, for each kept config, Triton's PTX and cubin
(DIR/NAME.triton.ptx, .cubin) and its registers, spills and shared memory (DIR/NAME.triton.json), to read
beside kilnc's `--emit=ptx`.

--autotuned DIR adds the acceptance's third config: for each dtype with a
DIR/<dtype>/ (the tutorial compiled by `kilnc compile --autotune` for
sm_90a, bench/build_matmul_cubins.sh) and each size, the tutorial's own
@triton.autotune runs first, and Kiln's cubin for the config Triton picked
is timed beside Triton with that config (rows "autotuned: ...").
--every-config (with --autotuned) times every config of the list that kilnc
compiled instead, each beside Triton with the same config (rows "list:
..."), without running the autotuner: the sweep that finds a config where
Kiln falls behind.
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("kiln_bench_matmul", os.path.join(REPO, "bench", "matmul.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)  # load_tutorial, make_inputs, atol
_spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
cubin_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_launch)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--sizes", default="1024,4096,8192", help="M=N=K each, or MxNxK")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kiln-only", action="store_true",
                        help="run and check each Kiln cubin once (for compute-sanitizer)")
    parser.add_argument("--only", default="", help="keep cubins whose name contains one of these (comma-separated)")
    parser.add_argument("--profile", action="store_true",
                        help="launch each Kiln cubin and Triton's kernel once per size (for ncu)")
    parser.add_argument("--asm", default="", help="write Triton's PTX and resource usage per config here")
    parser.add_argument("--autotuned", default="",
                        help="directory of kilnc --autotune outputs per dtype: time Triton's autotuned pick")
    parser.add_argument("--every-config", action="store_true",
                        help="with --autotuned: time every compiled config of the list, not only Triton's pick")
    parser.add_argument("--autotuned-arch", default="sm_90a",
                        help="the arch the --autotuned lists were compiled for (build_matmul_cubins.sh's AUTOTUNE_ARCH)")
    cubin_launch.add_triton_mma_v2_option(parser)
    args = parser.parse_args()
    cubin_launch.use_triton_mma_v2(args)
    import torch
    import triton
    torch.backends.cuda.matmul.allow_tf32 = False
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    mod = bench.load_tutorial(bench.TUTORIAL)
    kernel = mod.matmul_kernel.fn
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp8e4nv": torch.float8_e4m3fn,
              "fp32": torch.float32}
    rows = []
    wrong = 0
    only = [o for o in args.only.split(",") if o]
    # A size is M=N=K, or MxNxK.
    sizes = [int(z) if "x" not in z else tuple(map(int, z.split("x"))) for z in args.sizes.split(",")]

    def cell(cubin, name, dtype, arch, cfg, size, label):
        """Checks (and unless --kiln-only/--profile, times) one cubin at one
        size beside Triton's kernel with the same config; appends a row."""
        nonlocal wrong
        bm, bn = cfg["BLOCK_SIZE_M"], cfg["BLOCK_SIZE_N"]
        M, N, K = (size,) * 3 if isinstance(size, int) else size
        size = size if isinstance(size, int) else f"{M}x{N}x{K}"
        # Cubins named *_bt_* take b stored N x K (build_matmul_cubins.sh).
        a, b, torch_out = bench.make_inputs(torch, dtype, M, N, K, b_transposed="_bt_" in name)
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        values = {"a_ptr": a.data_ptr(), "b_ptr": b.data_ptr(), "c_ptr": c.data_ptr(), "M": M, "N": N,
                  "K": K, "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bk": b.stride(0),
                  "stride_bn": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1)}
        arguments = cubin.arguments(values)
        grid = triton.cdiv(M, bm) * triton.cdiv(N, bn)

        def kiln():
            cubin.launch((grid,), arguments, torch.cuda.current_stream().cuda_stream)

        def upstream():
            return kernel[(grid,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                   c.stride(0), c.stride(1), ACTIVATION="", **cfg)

        if args.kiln_only:
            c.zero_()
            kiln()
            torch.cuda.synchronize()
            ok = bool(torch.allclose(c.float(), torch_out, atol=bench.atol(dtype), rtol=0))
            print(f"{name} {size}^3: correct {ok}", flush=True)
            wrong += not ok
            return
        if args.profile:
            for run in (kiln, upstream, kiln, upstream):  # warm-up launch, then the profiled one
                run()
            torch.cuda.synchronize()
            print(f"{name} {size}^3: profiled", flush=True)
            return
        checks = {}
        for tag, run in (("kiln", kiln), ("triton", upstream)):
            c.zero_()
            compiled = run()
            torch.cuda.synchronize()
            checks[tag] = bool(torch.allclose(c.float(), torch_out, atol=bench.atol(dtype), rtol=0))
            if tag == "triton" and args.asm:
                os.makedirs(args.asm, exist_ok=True)
                with open(os.path.join(args.asm, name + ".triton.ptx"), "w") as f:
                    f.write(compiled.asm["ptx"])
                with open(os.path.join(args.asm, name + ".triton.cubin"), "wb") as f:
                    f.write(compiled.asm["cubin"])
                json.dump(dict(registers=compiled.n_regs, spills=compiled.n_spills,
                               shared=compiled.metadata.shared),
                          open(os.path.join(args.asm, name + ".triton.json"), "w"))
        cublas = None
        if dtype == "fp32":
            # cuBLAS in tf32, as tl.dot's default precision is.
            def cublas():
                torch.backends.cuda.matmul.allow_tf32 = True
                torch.matmul(a, b)
                torch.backends.cuda.matmul.allow_tf32 = False
        elif dtype != "fp8e4nv":
            cublas = lambda: torch.matmul(a, b)
        times, tf, ratio = cubin_launch.time_interleaved(
            dict(kiln=kiln, triton=upstream, cublas=cublas), args.rounds, 2 * M * N * K * 1e-9)
        config = (f"{bm}x{bn}x{cfg['BLOCK_SIZE_K']} w{cfg['num_warps']} s{cfg['num_stages']}"
                  + (f" g{cfg['GROUP_SIZE_M']}" if cfg["GROUP_SIZE_M"] != 8 else ""))
        row = dict(name=name, dtype=dtype, arch=arch, size=size, config=label + config,
                   registers=cubin.meta.get("registers"), spills=cubin.meta.get("spills"),
                   shared_bytes=cubin.shared, correct=checks, tflops=tf, kiln_over_triton=ratio)
        rows.append(row)
        print(f"{name} {size}^3: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} "
              f"cublas {tf.get('cublas', float('nan')):.1f} TFLOP/s  kiln/triton {ratio:.3f}  "
              f"correct {checks}", flush=True)

    for line in open(os.path.join(args.cubins, "list.txt")):
        name, dtype, arch, bm, bn, bk, group, warps, stages = line.strip().split("|")
        if only and not any(o in name for o in only):
            continue
        bm, bn, bk, group, warps, stages = map(int, (bm, bn, bk, group, warps, stages))
        cfg = dict(BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, GROUP_SIZE_M=group,
                   num_warps=warps, num_stages=stages)
        cubin = cubin_launch.Cubin(cuda, args.cubins, name)
        for size in sizes:
            cell(cubin, name, dtype, arch, cfg, size, "")
        cubin.unload()

    # Triton's autotuned pick, and Kiln's cubin for the same config.
    for dtype in sorted(os.listdir(args.autotuned)) if args.autotuned else []:
        directory = os.path.join(args.autotuned, dtype)
        index = {}
        for line in open(os.path.join(directory, "configs.txt")):
            key, _, text = line.strip().partition(": ")
            if os.path.exists(os.path.join(directory, key + ".cubin")):
                values = dict(item.split("=") for item in text.split(", "))
                index[frozenset((k, int(values[k])) for k in bench.META)] = key
        if args.every_config:
            for cfg_key, key in sorted(index.items(), key=lambda item: int(item[1][len("config"):])):
                cfg = dict(cfg_key)
                if only and not any(o in f"{dtype}_{args.autotuned_arch}_{key}" for o in only):
                    continue
                cubin = cubin_launch.Cubin(cuda, directory, key)
                for size in sizes:
                    cell(cubin, f"{dtype}_{args.autotuned_arch}_{key}", dtype, args.autotuned_arch, cfg, size, "list: ")
                cubin.unload()
            continue
        for size in sizes:
            if not isinstance(size, int):
                continue  # Triton's autotuner keys on M, N, K: cubes only here
            a, b, _ = bench.make_inputs(torch, dtype, size, size, size)
            cfg, seconds = bench.autotuned_pick(mod, torch, a, b)
            del a, b
            key = index.get(frozenset(cfg.items()))
            print(f"{dtype} {size}^3: Triton's autotuner picked {cfg} in {seconds:.0f} s; Kiln's {key}", flush=True)
            if key is None:
                rows.append(dict(name=f"{dtype}_autotuned", dtype=dtype, arch=args.autotuned_arch, size=size,
                                 config="autotuned: " + str(cfg), error="no Kiln cubin for this config"))
                continue
            cubin = cubin_launch.Cubin(cuda, directory, key)
            cell(cubin, f"{dtype}_{args.autotuned_arch}_autotuned_{key}", dtype, args.autotuned_arch, cfg, size,
                 "autotuned: ")
            cubin.unload()

    if args.kiln_only or args.profile:
        raise SystemExit(1 if wrong else 0)
    os.makedirs(args.out, exist_ok=True)
    result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                  triton=triton.__version__, torch=torch.__version__, rounds=args.rounds,
                  triton_mma_v2=args.triton_mma_v2, rows=rows)
    json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"# Tutorial 03 matmul, Kiln cubins beside Triton {triton.__version__} ({result['gpu']}, {result['date']})\n\n")
        if args.triton_mma_v2:
            f.write("Triton ran with `DISABLE_MMA_V3=1`: its mma.sync (ldmatrix, cp.async) path, "
                    "the one it takes on sm_80-89.\n\n")
        f.write("| dtype | Kiln arch | config | M=N=K | Triton TFLOP/s | Kiln TFLOP/s | cuBLAS TFLOP/s | Kiln/Triton | correct (Kiln, Triton) | regs | spills |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if "error" in r:
                f.write(f"| {r['dtype']} | {r['arch']} | {r['config']} | {r['size']} | {r['error']} |\n")
                continue
            cb = r["tflops"].get("cublas")
            f.write(f"| {r['dtype']} | {r['arch']} | {r['config']} | {r['size']} | {r['tflops']['triton']:.1f} | "
                    f"{r['tflops']['kiln']:.1f} | {'%.1f' % cb if cb else '—'} | {r['kiln_over_triton']:.3f} | "
                    f"{r['correct']['kiln']}, {r['correct']['triton']} | {r['registers']} | {r['spills']} |\n")


if __name__ == "__main__":
    main()
