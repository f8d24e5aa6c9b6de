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
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os
import statistics

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
    parser.add_argument("--sizes", default="1024,4096,8192")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kiln-only", action="store_true",
                        help="run and check each Kiln cubin once (for compute-sanitizer)")
    args = parser.parse_args()
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
    for line in open(os.path.join(args.cubins, "list.txt")):
        name, dtype, arch, bm, bn, bk, group, warps, stages = line.strip().split("|")
        bm, bn, bk, group, warps, stages = map(int, (bm, bn, bk, group, warps, stages))
        cubin = cubin_launch.Cubin(cuda, args.cubins, name)
        meta, shared = cubin.meta, cubin.shared
        for size in map(int, args.sizes.split(",")):
            M = N = K = size
            a, b, torch_out = bench.make_inputs(torch, dtype, M, N, K)
            c = torch.empty((M, N), device="cuda", dtype=torch.float16)
            values = {"a_ptr": a.data_ptr(), "b_ptr": b.data_ptr(), "c_ptr": c.data_ptr(), "M": M, "N": N,
                      "K": K, "stride_am": a.stride(0), "stride_ak": a.stride(1), "stride_bk": b.stride(0),
                      "stride_bn": b.stride(1), "stride_cm": c.stride(0), "stride_cn": c.stride(1)}
            arguments = cubin.arguments(values)
            grid = triton.cdiv(M, bm) * triton.cdiv(N, bn)

            def kiln(arguments=arguments, grid=grid):
                cubin.launch((grid,), arguments, torch.cuda.current_stream().cuda_stream)

            def upstream():
                kernel[(grid,)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk,
                                GROUP_SIZE_M=group, ACTIVATION="", num_warps=warps, num_stages=stages)

            if args.kiln_only:
                c.zero_()
                kiln()
                torch.cuda.synchronize()
                ok = bool(torch.allclose(c.float(), torch_out, atol=bench.atol(dtype), rtol=0))
                print(f"{name} {size}^3: correct {ok}", flush=True)
                wrong += not ok
                continue
            checks = {}
            for tag, run in (("kiln", kiln), ("triton", upstream)):
                c.zero_()
                run()
                torch.cuda.synchronize()
                checks[tag] = bool(torch.allclose(c.float(), torch_out, atol=bench.atol(dtype), rtol=0))
            cublas = None
            if dtype == "fp32":
                # cuBLAS in tf32, as tl.dot's default precision is.
                def cublas():
                    torch.backends.cuda.matmul.allow_tf32 = True
                    torch.matmul(a, b)
                    torch.backends.cuda.matmul.allow_tf32 = False
            elif dtype != "fp8e4nv":
                cublas = lambda: torch.matmul(a, b)
            times = {"kiln": [], "triton": [], "cublas": []}
            for _ in range(args.rounds):
                times["kiln"].append(triton.testing.do_bench(kiln))
                times["triton"].append(triton.testing.do_bench(upstream))
                if cublas:
                    times["cublas"].append(triton.testing.do_bench(cublas))
            flops = 2 * M * N * K * 1e-9
            tf = {k: flops / statistics.median(v) for k, v in times.items() if v}
            ratio = statistics.median(t / k for k, t in zip(times["kiln"], times["triton"]))
            row = dict(name=name, dtype=dtype, arch=arch, size=size, config=f"{bm}x{bn}x{bk} w{warps} s{stages}",
                       registers=meta.get("registers"), spills=meta.get("spills"), shared_bytes=shared,
                       correct=checks, tflops=tf, kiln_over_triton=ratio)
            rows.append(row)
            print(f"{name} {size}^3: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} "
                  f"cublas {tf.get('cublas', float('nan')):.1f} TFLOP/s  kiln/triton {ratio:.3f}  "
                  f"correct {checks}", flush=True)
        cubin.unload()
    if args.kiln_only:
        raise SystemExit(1 if wrong else 0)
    os.makedirs(args.out, exist_ok=True)
    result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                  triton=triton.__version__, torch=torch.__version__, rounds=args.rounds, rows=rows)
    json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(f"# Tutorial 03 matmul, Kiln cubins beside Triton {triton.__version__} ({result['gpu']}, {result['date']})\n\n")
        f.write("| dtype | Kiln arch | config | M=N=K | Triton TFLOP/s | Kiln TFLOP/s | cuBLAS TFLOP/s | Kiln/Triton | correct (Kiln, Triton) | regs | spills |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            cb = r["tflops"].get("cublas")
            f.write(f"| {r['dtype']} | {r['arch']} | {r['config']} | {r['size']} | {r['tflops']['triton']:.1f} | "
                    f"{r['tflops']['kiln']:.1f} | {'%.1f' % cb if cb else '—'} | {r['kiln_over_triton']:.3f} | "
                    f"{r['correct']['kiln']}, {r['correct']['triton']} | {r['registers']} | {r['spills']} |\n")


if __name__ == "__main__":
    main()
