"""bench/kernels/attention_fwd.py's attn_fwd under Triton 3.6's JIT and as
Kiln cubins (bench/build_attention_cubins.sh), same config, same inputs, one
process; torch's scaled_dot_product_attention (flash) beside them.

Run on the GPU machine from the repository root:

    python3 bench/attention_cubins.py --cubins .devbuild/attention_cubins --out OUT_DIR

--source tutorial06 runs upstream's tutorial 06 `_attn_fwd` instead (the
unchanged file under tests/realworld; cubins from
`bench/build_attention_cubins.sh KILNC DEST tutorial06`), both sides with
pointer arguments, from which the kernel makes its tensor descriptors
(Triton: device-side TMA descriptors, through triton.set_allocator).

Shapes: batch 4, 32 heads, N_CTX in --sizes, fp16, the cubin's HEAD_DIM and
causality. Each output is checked against torch (atol 1e-2, rtol 0, as
upstream's tutorial 06) before timing. Timing: triton.testing.do_bench, Kiln
and Triton interleaved over --rounds rounds; the ratio is the median of the
per-round ratios. FLOPs: 4 Z H N^2 D, halved when causal. Writes
OUT_DIR/results.json and OUT_DIR/results.md.

--kiln-only launches each Kiln cubin once per size and checks it against
attention computed on the CPU (use small --batch/--heads): no Triton and no
timing, the form tests/gpu/compute_sanitizer.sh runs under compute-sanitizer.
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
cubin_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_launch)


TUTORIAL06 = os.path.join(REPO, "tests", "realworld", "tutorials", "python", "tutorials",
                          "06-fused-attention.py")


def load_kernel(source):
    path = TUTORIAL06 if source.startswith("tutorial06") else os.path.join(REPO, "bench", "kernels", "attention_fwd.py")
    spec = importlib.util.spec_from_file_location("kiln_attention_" + source, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # The tutorial's kernel is autotuned: its .fn runs one forced config.
    if source.startswith("tutorial06"):
        return mod._attn_fwd.fn
    return mod.attn_fwd_block_ptr if source == "bench_block_ptr" else mod.attn_fwd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--sizes", default="1024,4096,16384")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--source", choices=("bench", "bench_block_ptr", "tutorial06", "tutorial06_host"), default="bench")
    parser.add_argument("--kiln-only", action="store_true",
                        help="launch each Kiln cubin once per size and check it against a reference computed "
                             "on the CPU; no Triton, no timing (for compute-sanitizer)")
    parser.add_argument("--triton-warp-specialize", action="store_true",
                        help="tutorial06 sources: Triton runs with warp_specialize=True (as the tutorial's "
                             "Hopper benchmark does for the non-causal forward with device descriptors); "
                             "Kiln's cubins are as built")
    parser.add_argument("--triton-cubins", metavar="DIR",
                        help="also write each Triton compile's cubin to DIR/<name>.triton.cubin (to read its SASS "
                             "beside Kiln's)")
    cubin_launch.add_triton_mma_v2_option(parser)
    args = parser.parse_args()
    if args.kiln_only:
        return kiln_only(args)
    cubin_launch.use_triton_mma_v2(args)
    import torch
    import triton
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    kernel = load_kernel(args.source)
    tutorial = args.source.startswith("tutorial06")
    host_descriptors = args.source == "tutorial06_host"
    if tutorial:
        # Device-side tensor descriptors take global scratch memory.
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    Z, H = args.batch, args.heads
    rows = []
    for line in open(os.path.join(args.cubins, "list.txt")):
        name, arch, d, causal, bm, bn, warps, stages = line.strip().split("|")
        d, bm, bn, warps, stages = map(int, (d, bm, bn, warps, stages))
        causal = causal == "1"
        cubin = cubin_launch.Cubin(cuda, args.cubins, name)
        meta, shared = cubin.meta, cubin.shared
        sizes = [int(n) for n in args.sizes.split(",")]
        # *_fp8 cubins: the tutorial's fp8 forward (build_attention_cubins.sh
        # FP8=1): q, k in fp8e5, v transposed in memory then fp8e5, out fp8e5.
        fp8 = name.endswith("_fp8")
        for n_ctx in sizes:
            torch.manual_seed(0)
            q, k, v = (torch.randn((Z * H, n_ctx, d), device="cuda", dtype=torch.float16) for _ in range(3))
            if fp8:
                q, k, v = tutorial_fp8_inputs(torch, q, k, v)
            out = torch.empty_like(q)
            sm_scale = 1.0 / d ** 0.5
            lse = torch.empty((Z * H, n_ctx), device="cuda", dtype=torch.float32)
            values = kiln_values(args.source, q, k, v, out, lse, sm_scale, Z, H, n_ctx)
            descs = (q, k, v, out)
            if host_descriptors:
                # As the tutorial makes them on Hopper (its pre_hook sets the
                # block shapes of the config): 2-D views of the heads' rows.
                from triton.tools.tensor_descriptor import TensorDescriptor
                blocks = ([bm, d], [bn, d], [bn, d], [bm, d])
                descs = tuple(TensorDescriptor(t, shape=[Z * H * n_ctx, d], strides=[d, 1], block_shape=b)
                              for t, b in zip((q, k, v, out), blocks))
            arguments = cubin.arguments(values)
            grid = (triton.cdiv(n_ctx, bm), Z * H)

            def kiln(arguments=arguments, grid=grid):
                cubin.launch(grid, arguments, torch.cuda.current_stream().cuda_stream)

            def upstream(grid=grid):
                if tutorial:
                    return kernel[grid](sm_scale, lse, Z, H, *descs, N_CTX=n_ctx, HEAD_DIM=d, BLOCK_M=bm,
                                 BLOCK_N=bn, FP8_OUTPUT=fp8, STAGE=3 if causal else 1,
                                 warp_specialize=args.triton_warp_specialize,
                                 IS_HOPPER=arch.startswith("sm_90"), num_warps=warps, num_stages=stages)
                else:
                    return kernel[grid](q, k, v, out, sm_scale, q.stride(0), q.stride(1), n_ctx, HEAD_DIM=d, BM=bm,
                                 BN=bn, CAUSAL=causal, num_warps=warps, num_stages=stages)

            # SDPA beside an fp8 kernel: its fp16 inputs, v made contiguous
            # again (the flash kernel wants D innermost).
            qs, ks, vs = (t.to(torch.float16).contiguous() for t in (q, k, v)) if fp8 else (q, k, v)

            def sdpa():
                return torch.nn.functional.scaled_dot_product_attention(
                    qs.view(Z, H, n_ctx, d), ks.view(Z, H, n_ctx, d), vs.view(Z, H, n_ctx, d),
                    is_causal=causal, scale=sm_scale)

            reference = sdpa().view(Z * H, n_ctx, d)
            outputs = {}
            checks = {}
            triton_failed = None
            for tag, run in (("kiln", kiln), ("triton", upstream)):
                out.zero_()
                try:
                    compiled = run()
                except Exception as error:  # Triton refuses some configs (warp_specialize on Hopper)
                    if tag != "triton":
                        raise
                    triton_failed = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                    print(f"{name} N_CTX={n_ctx}: Triton failed to compile or run: {triton_failed}", flush=True)
                    break
                torch.cuda.synchronize()
                if tag == "triton":
                    # What Triton's compile of the same config took, beside Kiln's.
                    triton_regs = getattr(compiled, "n_regs", None)
                    triton_shared = getattr(getattr(compiled, "metadata", None), "shared", None)
                    if args.triton_cubins and n_ctx == sizes[0]:
                        os.makedirs(args.triton_cubins, exist_ok=True)
                        with open(os.path.join(args.triton_cubins, name + ".triton.cubin"), "wb") as f:
                            f.write(compiled.asm["cubin"])
                # fp8: the tutorial's own tolerance (atol 3), and Kiln's
                # output against Triton's below.
                checks[tag] = bool(torch.allclose(out.float(), reference.float(), atol=3 if fp8 else 1e-2,
                                                  rtol=0))
                outputs[tag] = out.float().clone() if fp8 else None
            if fp8 and "triton" in outputs:
                difference = (outputs["kiln"] - outputs["triton"]).abs()
                checks["kiln_vs_triton_max"] = float(difference.max())
                checks["kiln_vs_triton_mean"] = float(difference.mean())
            if triton_failed:
                rows.append(dict(name=name, arch=arch, head_dim=d, causal=causal, n_ctx=n_ctx,
                                 config=config_of(name, bm, bn, warps, stages), triton_failed=triton_failed))
                del q, k, v, out, reference, lse
                continue
            times, tf, ratio = cubin_launch.time_interleaved(
                dict(kiln=kiln, triton=upstream, sdpa=sdpa), args.rounds,
                4.0 * Z * H * n_ctx * n_ctx * d * (0.5 if causal else 1.0) * 1e-9)
            row = dict(name=name, arch=arch, head_dim=d, causal=causal, n_ctx=n_ctx,
                       config=config_of(name, bm, bn, warps, stages), registers=meta.get("registers"),
                       spills=meta.get("spills"), shared_bytes=shared, triton_registers=triton_regs,
                       triton_shared_bytes=triton_shared, correct=checks, tflops=tf,
                       kiln_over_triton=ratio)
            rows.append(row)
            print(f"{name} N_CTX={n_ctx}: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} sdpa {tf['sdpa']:.1f} "
                  f"TFLOP/s  kiln/triton {ratio:.3f}  correct {checks}", flush=True)
            del q, k, v, out, reference, lse
        cubin.unload()
    os.makedirs(args.out, exist_ok=True)
    result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                  triton=triton.__version__, torch=torch.__version__, source=args.source, batch=Z, heads=H,
                  triton_warp_specialize=args.triton_warp_specialize, triton_mma_v2=args.triton_mma_v2,
                  rounds=args.rounds,
                  rows=rows)
    json.dump(result, open(os.path.join(args.out, "results.json"), "w"), indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        what = ("upstream tutorial 06 _attn_fwd" + (", host descriptors" if host_descriptors else "")
                if tutorial else "bench/kernels/attention_fwd.py")
        f.write(f"# Attention forward ({what}), Kiln cubins beside Triton "
                f"{triton.__version__} ({result['gpu']}, {result['date']})\n\n")
        f.write(f"fp16, batch {Z}, {H} heads." +
                (" Triton with warp_specialize=True (Kiln's cubins as built)." if args.triton_warp_specialize else "")
                + (" Triton with DISABLE_MMA_V3=1: its mma.sync path, the one it takes on sm_80-89."
                   if args.triton_mma_v2 else "")
                + "\n\n")
        f.write("| Kiln arch | HEAD_DIM | causal | config | N_CTX | Triton TFLOP/s | Kiln TFLOP/s | SDPA TFLOP/s "
                "| Kiln/Triton | correct (Kiln, Triton) | regs (Kiln, Triton) | shared KB (Kiln, Triton) | spills |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            if r.get("triton_failed"):
                f.write(f"| {r['arch']} | {r['head_dim']} | {r['causal']} | {r['config']} | {r['n_ctx']} | "
                        f"failed: {r['triton_failed'][:60]} | | | | | | | |\n")
                continue
            f.write(f"| {r['arch']} | {r['head_dim']} | {r['causal']} | {r['config']} | {r['n_ctx']} | "
                    f"{r['tflops']['triton']:.1f} | {r['tflops']['kiln']:.1f} | {r['tflops']['sdpa']:.1f} | "
                    f"{r['kiln_over_triton']:.3f} | {r['correct']['kiln']}, {r['correct']['triton']} | "
                    f"{r['registers']}, {r['triton_registers']} | {kb(r['shared_bytes'])}, "
                    f"{kb(r['triton_shared_bytes'])} | {r['spills']} |\n")


def tutorial_fp8_inputs(torch, q, k, v):
    """q, k, v (Z*H x N_CTX x D) as tutorial 06's fp8 forward takes them:
    fp8e5, v stored transposed (D x N_CTX per head) under the same shape."""
    v = v.transpose(1, 2).contiguous().transpose(1, 2)
    return q.to(torch.float8_e5m2), k.to(torch.float8_e5m2), v.to(torch.float8_e5m2)


def kiln_values(source, q, k, v, out, lse, sm_scale, Z, H, n_ctx):
    """The cubin's arguments by parameter name for `source`'s kernel on
    q, k, v (Z*H x N_CTX x D) into out, with lse the tutorial's M."""
    if not source.startswith("tutorial06"):
        return {"Q": q.data_ptr(), "K": k.data_ptr(), "V": v.data_ptr(), "Out": out.data_ptr(),
                "sm_scale": sm_scale, "stride_h": q.stride(0), "stride_m": q.stride(1), "N_CTX": n_ctx}
    tensors = dict(desc_q=q, desc_k=k, desc_v=v, desc_o=out)
    if source == "tutorial06_host":  # 2-D views of the heads' rows, as the tutorial's descriptors
        d = q.shape[-1]
        descs = {key: cubin_launch.TensorDescriptor(t.data_ptr(), [Z * H * n_ctx, d], [d, 1])
                 for key, t in tensors.items()}
    else:
        descs = {key: t.data_ptr() for key, t in tensors.items()}
    return {"sm_scale": sm_scale, "M": lse.data_ptr(), "Z": Z, "H": H, **descs, "N_CTX": n_ctx}


def kiln_only(args):
    """Each cubin once per size, checked against attention computed on the
    CPU in fp32: the only GPU kernels are Kiln's (and torch's copies), so that
    compute-sanitizer's reports are about Kiln's code. Exits 1 on a wrong
    output."""
    import torch
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    Z, H = args.batch, args.heads
    wrong = right = 0
    for line in open(os.path.join(args.cubins, "list.txt")):
        name, arch, d, causal, bm, bn, warps, stages = line.strip().split("|")
        d, bm = int(d), int(bm)
        causal = causal == "1"
        cubin = cubin_launch.Cubin(cuda, args.cubins, name)
        sizes = [int(n) for n in args.sizes.split(",")]
        fp8 = name.endswith("_fp8")
        for n_ctx in sizes:
            torch.manual_seed(0)
            q, k, v = (torch.randn((Z * H, n_ctx, d), dtype=torch.float16) for _ in range(3))
            if fp8:
                q, k, v = tutorial_fp8_inputs(torch, q, k, v)
            sm_scale = 1.0 / d ** 0.5
            scores = (q.float() @ k.float().transpose(1, 2)) * sm_scale
            if causal:
                scores.masked_fill_(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
            reference = torch.softmax(scores, dim=-1) @ v.float()
            q, k = q.cuda(), k.cuda()
            v = v.transpose(1, 2).cuda().transpose(1, 2) if fp8 else v.cuda()
            out = torch.zeros_like(q)
            lse = torch.empty((Z * H, n_ctx), device="cuda", dtype=torch.float32)
            values = kiln_values(args.source, q, k, v, out, lse, sm_scale, Z, H, n_ctx)
            cubin.launch(((n_ctx + bm - 1) // bm, Z * H), cubin.arguments(values),
                         torch.cuda.current_stream().cuda_stream)
            torch.cuda.synchronize()
            # fp8: the tutorial's v descriptor is HEAD_DIM x Z*H*N_CTX while
            # its offsets run to HEAD_DIM times that, so TMA zero-fills v for
            # all but the first heads, in Triton's kernel as in Kiln's (main()
            # compares the two: identical). Here only finite outputs count.
            ok = (bool(torch.isfinite(out.cpu().float()).all()) if fp8 else
                  bool(torch.allclose(out.cpu().float(), reference, atol=1e-2, rtol=0)))
            wrong += not ok
            right += ok
            print(f"{name} N_CTX={n_ctx}: {'ok' if ok else 'WRONG'}", flush=True)
        cubin.unload()
    print(f"{right} passed, {wrong} failed")
    return 1 if wrong else 0


def config_of(name, bm, bn, warps, stages):
    """The row's config; `ws` for Kiln cubins built with warp_specialize=True
    (bench/build_attention_cubins.sh WS=1 names them NAME_ws)."""
    return f"{bm}x{bn} w{warps} s{stages}" + (" ws" if name.endswith("_ws") else "")


def kb(n):
    return "?" if n is None else f"{n / 1024:.0f}"


if __name__ == "__main__":
    sys.exit(main())
