"""Upstream's tutorial 06 attention backward (the unchanged file under
tests/realworld) under Triton 3.6's JIT and as Kiln cubins
(bench/build_attention_bwd_cubins.sh), same kernels, same launches, same
inputs, one process; torch's scaled_dot_product_attention backward beside
them.

Run on the GPU machine from the repository root:

    python3 bench/attention_bwd_cubins.py --cubins .devbuild/attention_bwd_cubins --out OUT_DIR

Both sides launch what the tutorial's `_attention.backward` launches, with
its arguments: `_attn_bwd_preprocess` (delta = rowsum(o * do), grid
(N_CTX / 128, Z H), PRE_BLOCK 128) then `_attn_bwd` (grid (N_CTX / 128, 1,
Z H), BLOCK_M1/N1/M2/N2 32/128/128/32, BLK_SLICE_FACTOR 2, 4 warps, 5
stages), K prescaled by sm_scale / ln 2 and M the forward's log2-domain
logsumexp. The prescaled K, o and M come once per shape, before timing, from
the tutorial's own forward (`_attn_fwd`, one fixed config: 128x64, 4 warps,
3 stages, no autotuning); the timed region is the two kernel launches.

Shapes: batch 4, 32 heads, N_CTX in --sizes (multiples of 128), fp16, the
cubins' HEAD_DIM and causality; inputs as upstream's test_op (normal, std
0.5; sm_scale 0.5; do standard normal). Checks before timing: dq, dk and dv
of each side against torch autograd through scaled_dot_product_attention
(the tutorial's naive reference would take 128 GiB at N_CTX 16384), and
Kiln's against Triton's, each with the tutorial's tolerance for CUDA, atol
1e-2, rtol 0 (its test loosens rtol to 1e-2 only on AMD's gfx90a); the
largest absolute errors go into the results too. Timing:
triton.testing.do_bench, Kiln and Triton interleaved over --rounds rounds;
the ratio is the median of the per-round ratios. FLOPs: 2.5 x 4 Z H N^2 D
(the tutorial's bench: the backward is 2.0 forwards plus 0.5 for the
recomputation), halved when causal. Writes OUT_DIR/results.json and
OUT_DIR/results.md, again after every row.

--kiln-only launches only Kiln's kernels, once per size, and checks their
gradients against attention's computed on the CPU in fp32 (for
compute-sanitizer: tests/gpu/compute_sanitizer.sh attention_bwd=DIR).

--check-args needs no GPU, torch or Triton: it reads the cubins' metadata,
checks their constexprs against the tutorial's constants, and packs the
argument list of every kernel for every size from placeholder addresses.
"""
import argparse
import ctypes
import datetime
import importlib.util
import json
import os
import statistics

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("kiln_cubin_launch", os.path.join(REPO, "bench", "cubin_launch.py"))
cubin_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cubin_launch)

TUTORIAL06 = os.path.join(REPO, "tests", "realworld", "tutorials", "python", "tutorials",
                          "06-fused-attention.py")

# `_attention.backward`'s constants.
PRE_BLOCK = 128
BWD_BLOCKS = dict(BLOCK_M1=32, BLOCK_N1=128, BLOCK_M2=128, BLOCK_N2=32, BLK_SLICE_FACTOR=2)
BWD_WARPS, BWD_STAGES = 4, 5
RCP_LN2 = 1.4426950408889634  # = 1.0 / ln(2)
# The forward that makes o and M: any correct config does; this one skips the autotuner.
FWD_CONFIG = dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3)
SM_SCALE = 0.5
ATOL = 1e-2


def load_tutorial():
    """The tutorial module. Importing it asks the active Triton driver for
    the device (and pytest must be importable); nothing else runs."""
    spec = importlib.util.spec_from_file_location("kiln_attention_tutorial06", TUTORIAL06)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def read_list(directory):
    """list.txt's configs: dicts of the bwd and preprocess cubin names,
    arch, HEAD_DIM, causality, warps and stages."""
    configs = []
    for line in open(os.path.join(directory, "list.txt")):
        if not line.strip():
            continue
        name, pre, arch, d, causal, warps, stages = line.strip().split("|")
        configs.append(dict(name=name, pre=pre, arch=arch, head_dim=int(d), causal=causal == "1",
                            warps=int(warps), stages=int(stages)))
    return configs


def contiguous_strides(Z, H, n_ctx, d):
    """q.stride() of a contiguous (Z, H, N_CTX, HEAD_DIM) tensor."""
    return (H * n_ctx * d, n_ctx * d, d, 1)


def preprocess_values(o, do, delta, Z, H, n_ctx):
    """`_attn_bwd_preprocess`'s run-time arguments, by name (pointers as
    addresses)."""
    return {"O": o, "DO": do, "Delta": delta, "Z": Z, "H": H, "N_CTX": n_ctx}


def bwd_values(q, arg_k, v, sm_scale, do, dq, dk, dv, M, delta, strides, H, n_ctx):
    """`_attn_bwd`'s run-time arguments, by name, as the tutorial passes
    them (its K is the prescaled arg_k)."""
    stride_z, stride_h, stride_tok, stride_d = strides
    return {"Q": q, "K": arg_k, "V": v, "sm_scale": sm_scale, "DO": do, "DQ": dq, "DK": dk, "DV": dv,
            "M": M, "D": delta, "stride_z": stride_z, "stride_h": stride_h, "stride_tok": stride_tok,
            "stride_d": stride_d, "H": H, "N_CTX": n_ctx}


def check_constexprs(meta, expected, name):
    """Raises unless the cubin was compiled with `expected` constexprs and
    the tutorial's launch options."""
    got = {c["name"]: c["value"] for c in meta["constexprs"]}
    want = {key: str(value) for key, value in expected.items()}
    if got != want:
        raise SystemExit(f"{name}: constexprs {got}, the tutorial launches {want}")


def expected_constexprs(config):
    return ({"BLOCK_M": PRE_BLOCK, "HEAD_DIM": config["head_dim"]},
            dict(BWD_BLOCKS, HEAD_DIM=config["head_dim"], CAUSAL=config["causal"]))


def grids(n_ctx, Z, H):
    """The tutorial's preprocess and backward grids."""
    assert n_ctx % PRE_BLOCK == 0 and n_ctx % BWD_BLOCKS["BLOCK_N1"] == 0, n_ctx
    return (n_ctx // PRE_BLOCK, Z * H), (n_ctx // BWD_BLOCKS["BLOCK_N1"], 1, Z * H)


def check_args(args):
    """The dry run: metadata, constexprs and packed arguments, no CUDA."""
    Z, H = args.batch, args.heads
    for config in read_list(args.cubins):
        metas = {}
        for key in ("pre", "name"):
            base = os.path.join(args.cubins, config[key])
            with open(base + ".cubin", "rb") as f:
                assert f.read(4) == b"\x7fELF", base + ".cubin is not an ELF file"
            metas[key] = json.load(open(base + ".json"))
        pre_expect, bwd_expect = expected_constexprs(config)
        check_constexprs(metas["pre"], pre_expect, config["pre"])
        check_constexprs(metas["name"], bwd_expect, config["name"])
        bwd_meta = metas["name"]
        assert (bwd_meta["num_warps"], bwd_meta["num_stages"]) == (BWD_WARPS, BWD_STAGES), config["name"]
        for n_ctx in map(int, args.sizes.split(",")):
            grids(n_ctx, Z, H)
            # Placeholder addresses, 256-byte aligned as torch's allocations are.
            address = iter(range(0x7F0000000000, 0x7F0000000000 + 16 * 2**32, 2**32))
            p = {key: next(address) for key in ("q", "k", "v", "o", "do", "dq", "dk", "dv", "M", "delta")}
            strides = contiguous_strides(Z, H, n_ctx, config["head_dim"])
            for key, meta, values in (
                    ("pre", metas["pre"], preprocess_values(p["o"], p["do"], p["delta"], Z, H, n_ctx)),
                    ("name", bwd_meta, bwd_values(p["q"], p["k"], p["v"], SM_SCALE, p["do"], p["dq"], p["dk"],
                                                   p["dv"], p["M"], p["delta"], strides, H, n_ctx))):
                names = [param["name"] for param in meta["params"]]
                assert sorted(names) == sorted(values), (config[key], names, sorted(values))
                for param in meta["params"]:
                    if param.get("divisibility") == 16:
                        assert values[param["name"]] % 16 == 0, (config[key], param["name"], n_ctx)
                holders = cubin_launch.pack_arguments(meta, values)
                passed = [param for param in meta["params"] if not param.get("equal_to_1")]
                assert len(holders) == len(passed)
        print(f"{config['name']} + {config['pre']}: {len(bwd_meta['params'])} + {len(metas['pre']['params'])} "
              f"params, kernel ABI {len(passed)} + {len(metas['pre']['params'])}; "
              f"_attn_bwd {bwd_meta['registers']} registers, {bwd_meta['spills']} bytes spilled, "
              f"{bwd_meta['shared_bytes']} bytes shared; preprocess {metas['pre']['registers']} registers; "
              f"sizes {args.sizes} OK")


def compiled_resources(compiled):
    """Registers and shared bytes of a Triton launch's CompiledKernel."""
    return getattr(compiled, "n_regs", None), getattr(getattr(compiled, "metadata", None), "shared", None)


def max_error(a, b):
    return float((a.float() - b.float()).abs().max())


def kiln_only(args):
    """Each config's two Kiln kernels once per size, checked against the
    gradients of attention computed on the CPU in fp32 (o and M, the
    forward's outputs the backward reads, come from there too): the only GPU
    kernels are Kiln's (and torch's copies), so that compute-sanitizer's
    reports are about Kiln's code. Exits 1 on a wrong gradient."""
    import torch
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    Z, H = args.batch, args.heads
    wrong = right = 0
    for config in read_list(args.cubins):
        d, causal = config["head_dim"], config["causal"]
        pre = cubin_launch.Cubin(cuda, args.cubins, config["pre"])
        bwd = cubin_launch.Cubin(cuda, args.cubins, config["name"])
        for n_ctx in map(int, args.sizes.split(",")):
            torch.manual_seed(20)
            q, k, v = (torch.empty((Z, H, n_ctx, d), dtype=torch.float16).normal_(mean=0.0, std=0.5)
                       for _ in range(3))
            do = torch.randn_like(q)
            leaves = [t.float().requires_grad_() for t in (q, k, v)]
            scores = leaves[0] @ leaves[1].transpose(-1, -2) * SM_SCALE
            if causal:
                scores = scores.masked_fill(torch.ones(n_ctx, n_ctx, dtype=torch.bool).triu(1), float("-inf"))
            ref_o = torch.softmax(scores, dim=-1) @ leaves[2]
            ref = dict(zip(("dq", "dk", "dv"), torch.autograd.grad(ref_o, leaves, do.float())))
            # The forward's M: the logsumexp of the scores, in log2 units.
            M = (torch.logsumexp(scores.detach(), dim=-1) * RCP_LN2).cuda()
            o = ref_o.detach().half().cuda()
            q, k, v, do = q.cuda(), k.cuda(), v.cuda(), do.cuda()
            arg_k = k * (SM_SCALE * RCP_LN2)
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            delta = torch.empty_like(M)
            pre_grid, grid = grids(n_ctx, Z, H)
            stream = torch.cuda.current_stream().cuda_stream
            pre.launch(pre_grid, pre.arguments(preprocess_values(o.data_ptr(), do.data_ptr(), delta.data_ptr(),
                                                                 Z, H, n_ctx)), stream)
            bwd.launch(grid, bwd.arguments(bwd_values(q.data_ptr(), arg_k.data_ptr(), v.data_ptr(), SM_SCALE,
                                                      do.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(),
                                                      M.data_ptr(), delta.data_ptr(), q.stride(), H, n_ctx)),
                       stream)
            torch.cuda.synchronize()
            got = {"dq": dq, "dk": dk, "dv": dv}
            errors = {key: max_error(got[key].cpu(), ref[key]) for key in got}
            ok = all(error <= ATOL for error in errors.values())
            wrong += not ok
            right += ok
            print(f"{config['name']} N_CTX={n_ctx}: {'ok' if ok else 'WRONG'} max err {errors}", flush=True)
        pre.unload()
        bwd.unload()
    print(f"{right} passed, {wrong} failed")
    return 1 if wrong else 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out")
    parser.add_argument("--sizes", default="1024,4096,16384")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dump-triton", metavar="DIR",
                        help="also write Triton's TTGIR, PTX and cubin of each config's _attn_bwd to DIR")
    parser.add_argument("--kiln-only", action="store_true",
                        help="only launch Kiln's kernels, once per size, checked against a CPU reference "
                             "(for compute-sanitizer)")
    parser.add_argument("--per-kernel", action="store_true",
                        help="also time each side's preprocess and _attn_bwd launches alone (times_ms's "
                             "kiln_pre, kiln_bwd, triton_pre, triton_bwd)")
    parser.add_argument("--check-args", action="store_true",
                        help="only build every cubin's argument list from its metadata (no GPU)")
    args = parser.parse_args()
    if args.check_args:
        return check_args(args)
    if args.kiln_only:
        return kiln_only(args)
    if not args.out:
        parser.error("--out is required (except with --check-args)")
    import torch
    import triton
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    torch.zeros(1, device="cuda")
    tutorial = load_tutorial()
    # The forward makes its tensor descriptors in the kernel: global scratch.
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    Z, H = args.batch, args.heads
    result = dict(date=datetime.date.today().isoformat(), gpu=torch.cuda.get_device_name(0),
                  triton=triton.__version__, torch=torch.__version__, source="tutorial06 backward", batch=Z,
                  heads=H, rounds=args.rounds, sm_scale=SM_SCALE, atol=ATOL, rtol=0.0, rows=[])
    for config in read_list(args.cubins):
        d, causal = config["head_dim"], config["causal"]
        pre = cubin_launch.Cubin(cuda, args.cubins, config["pre"])
        bwd = cubin_launch.Cubin(cuda, args.cubins, config["name"])
        pre_expect, bwd_expect = expected_constexprs(config)
        check_constexprs(pre.meta, pre_expect, config["pre"])
        check_constexprs(bwd.meta, bwd_expect, config["name"])
        for n_ctx in map(int, args.sizes.split(",")):
            torch.manual_seed(20)
            q, k, v = (torch.empty((Z, H, n_ctx, d), dtype=torch.float16, device="cuda").normal_(mean=0.0, std=0.5)
                       for _ in range(3))
            do = torch.randn_like(q)
            sm_scale = SM_SCALE
            pre_grid, grid = grids(n_ctx, Z, H)

            # The tutorial's forward, for o and M (log2-domain logsumexp).
            o = torch.empty_like(q)
            M = torch.empty((Z, H, n_ctx), device="cuda", dtype=torch.float32)
            fwd = dict(FWD_CONFIG)
            tutorial._attn_fwd.fn[(triton.cdiv(n_ctx, fwd["BLOCK_M"]), Z * H, 1)](
                sm_scale, M, Z, H, q, k, v, o, N_CTX=n_ctx, HEAD_DIM=d, FP8_OUTPUT=False,
                STAGE=3 if causal else 1, warp_specialize=False, IS_HOPPER=tutorial.is_hopper(), **fwd)
            # What `_attention.backward` does before its launches.
            assert do.is_contiguous() and q.stride() == k.stride() == v.stride() == o.stride() == do.stride()
            strides = q.stride()
            assert strides == contiguous_strides(Z, H, n_ctx, d)
            arg_k = k * (sm_scale * RCP_LN2)
            grads = {side: dict(dq=torch.empty_like(q), dk=torch.empty_like(k), dv=torch.empty_like(v),
                                delta=torch.empty_like(M)) for side in ("kiln", "triton")}

            g = grads["triton"]

            def upstream():
                compiled_pre = tutorial._attn_bwd_preprocess[pre_grid](
                    o, do, g["delta"], Z, H, n_ctx, BLOCK_M=PRE_BLOCK, HEAD_DIM=d)
                compiled = tutorial._attn_bwd[grid](
                    q, arg_k, v, sm_scale, do, g["dq"], g["dk"], g["dv"], M, g["delta"], *strides, H, n_ctx,
                    **BWD_BLOCKS, HEAD_DIM=d, num_warps=BWD_WARPS, num_stages=BWD_STAGES, CAUSAL=causal)
                return compiled_pre, compiled

            kg = grads["kiln"]
            pre_args = pre.arguments(preprocess_values(o.data_ptr(), do.data_ptr(), kg["delta"].data_ptr(), Z, H,
                                                       n_ctx))
            bwd_args = bwd.arguments(bwd_values(q.data_ptr(), arg_k.data_ptr(), v.data_ptr(), sm_scale,
                                                do.data_ptr(), kg["dq"].data_ptr(), kg["dk"].data_ptr(),
                                                kg["dv"].data_ptr(), M.data_ptr(), kg["delta"].data_ptr(),
                                                strides, H, n_ctx))

            def kiln():
                stream = torch.cuda.current_stream().cuda_stream
                pre.launch(pre_grid, pre_args, stream)
                bwd.launch(grid, bwd_args, stream)

            # Reference: torch autograd through SDPA, the same q, k, v, do.
            leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
            ref_o = torch.nn.functional.scaled_dot_product_attention(*leaves, is_causal=causal, scale=sm_scale)
            ref = dict(zip(("dq", "dk", "dv"), torch.autograd.grad(ref_o, leaves, do, retain_graph=True)))

            def sdpa():
                return torch.autograd.grad(ref_o, leaves, do, retain_graph=True)

            # Triton first: a Kiln kernel that faults takes the context with it.
            for side in ("triton", "kiln"):
                for t in grads[side].values():
                    t.fill_(float("nan"))
            compiled_pre, compiled = upstream()
            torch.cuda.synchronize()
            if args.dump_triton:
                cubin_launch.write_triton_asm(compiled, args.dump_triton, config["name"])
            kiln()
            torch.cuda.synchronize()
            triton_regs, triton_shared = compiled_resources(compiled)
            triton_pre_regs, _ = compiled_resources(compiled_pre)
            errors, checks = {}, {}
            for side, against in (("kiln", ref), ("triton", ref), ("kiln_vs_triton", grads["triton"])):
                got = grads["kiln" if side != "triton" else "triton"]
                errors[side] = {key: max_error(got[key], against[key]) for key in ("dq", "dk", "dv")}
                checks[side] = all(bool(torch.allclose(got[key], against[key], atol=ATOL, rtol=0))
                                   for key in ("dq", "dk", "dv"))
            errors["forward_o"] = max_error(o, ref_o.detach())
            errors["delta_kiln_vs_triton"] = max_error(grads["kiln"]["delta"], grads["triton"]["delta"])
            del ref

            # Each launch alone (--per-kernel): where a difference between
            # the sides lies.
            def kiln_pre():
                pre.launch(pre_grid, pre_args, torch.cuda.current_stream().cuda_stream)

            def kiln_bwd():
                bwd.launch(grid, bwd_args, torch.cuda.current_stream().cuda_stream)

            def triton_pre():
                tutorial._attn_bwd_preprocess[pre_grid](o, do, g["delta"], Z, H, n_ctx, BLOCK_M=PRE_BLOCK,
                                                        HEAD_DIM=d)

            def triton_bwd():
                tutorial._attn_bwd[grid](
                    q, arg_k, v, sm_scale, do, g["dq"], g["dk"], g["dv"], M, g["delta"], *strides, H, n_ctx,
                    **BWD_BLOCKS, HEAD_DIM=d, num_warps=BWD_WARPS, num_stages=BWD_STAGES, CAUSAL=causal)

            timed = dict(kiln=kiln, triton=upstream, sdpa=sdpa)
            if args.per_kernel:
                timed.update(kiln_pre=kiln_pre, triton_pre=triton_pre, kiln_bwd=kiln_bwd, triton_bwd=triton_bwd)
            times, tf, ratio = cubin_launch.time_interleaved(
                timed, args.rounds, 2.5 * 4.0 * Z * H * n_ctx * n_ctx * d * (0.5 if causal else 1.0) * 1e-9)
            meta = bwd.meta
            row = dict(name=config["name"], preprocess=config["pre"], arch=config["arch"], head_dim=d, causal=causal,
                       n_ctx=n_ctx, config=f"{BWD_BLOCKS['BLOCK_M1']}/{BWD_BLOCKS['BLOCK_N1']}/"
                       f"{BWD_BLOCKS['BLOCK_M2']}/{BWD_BLOCKS['BLOCK_N2']} w{BWD_WARPS} s{BWD_STAGES}",
                       registers=meta.get("registers"), spills=meta.get("spills"),
                       spill_stores=meta.get("spill_stores"), spill_loads=meta.get("spill_loads"),
                       shared_bytes=bwd.shared, preprocess_registers=pre.meta.get("registers"),
                       triton_registers=triton_regs, triton_shared_bytes=triton_shared,
                       triton_preprocess_registers=triton_pre_regs, correct=checks, max_abs_error=errors,
                       times_ms=times, tflops=tf, kiln_over_triton=ratio)
            result["rows"].append(row)
            write_results(args.out, result)
            if args.per_kernel:
                print(f"{config['name']} N_CTX={n_ctx} per kernel (ms, median): " +
                      " ".join(f"{key} {statistics.median(t):.4f}" for key, t in times.items()), flush=True)
            print(f"{config['name']} N_CTX={n_ctx}: kiln {tf['kiln']:.1f} triton {tf['triton']:.1f} "
                  f"sdpa {tf['sdpa']:.1f} TFLOP/s  kiln/triton {ratio:.3f}  correct {checks}  "
                  f"max err {errors}", flush=True)
            del q, k, v, do, o, M, arg_k, grads, g, kg, leaves, ref_o, pre_args, bwd_args
            torch.cuda.empty_cache()
        pre.unload()
        bwd.unload()


def write_results(out, result):
    os.makedirs(out, exist_ok=True)
    json.dump(result, open(os.path.join(out, "results.json"), "w"), indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(f"# Attention backward (upstream tutorial 06 _attn_bwd_preprocess + _attn_bwd), Kiln cubins "
                f"beside Triton {result['triton']} ({result['gpu']}, {result['date']})\n\n")
        f.write(f"fp16, batch {result['batch']}, {result['heads']} heads, sm_scale {result['sm_scale']}; "
                f"TFLOP/s count 2.5 forwards; checks against torch autograd (SDPA) and Kiln against Triton, "
                f"atol {result['atol']}, rtol 0 (dq, dk, dv).\n\n")
        f.write("| Kiln arch | HEAD_DIM | causal | config | N_CTX | Triton TFLOP/s | Kiln TFLOP/s | SDPA TFLOP/s "
                "| Kiln/Triton | correct (Kiln, Triton, Kiln=Triton) | max err Kiln dq/dk/dv "
                "| regs (Kiln, Triton) | shared KB (Kiln, Triton) | spills |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in result["rows"]:
            e = r["max_abs_error"]["kiln"]
            f.write(f"| {r['arch']} | {r['head_dim']} | {r['causal']} | {r['config']} | {r['n_ctx']} | "
                    f"{r['tflops']['triton']:.1f} | {r['tflops']['kiln']:.1f} | {r['tflops']['sdpa']:.1f} | "
                    f"{r['kiln_over_triton']:.3f} | {r['correct']['kiln']}, {r['correct']['triton']}, "
                    f"{r['correct']['kiln_vs_triton']} | {e['dq']:.2g}/{e['dk']:.2g}/{e['dv']:.2g} | "
                    f"{r['registers']}, {r['triton_registers']} | {kb(r['shared_bytes'])}, "
                    f"{kb(r['triton_shared_bytes'])} | {r['spills']} |\n")
        f.write("\nregs and shared are `_attn_bwd`'s; the preprocess kernel: Kiln "
                + ", ".join(sorted({f"{r['preprocess_registers']}" for r in result["rows"]}))
                + " registers, Triton "
                + ", ".join(sorted({f"{r['triton_preprocess_registers']}" for r in result["rows"]}))
                + ".\n")


def kb(n):
    return "?" if n is None else f"{n / 1024:.0f}"


if __name__ == "__main__":
    main()
