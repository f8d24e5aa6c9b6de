"""Real-world cases from flash-linear-attention (FLA, tests/realworld/fla):
the chunked forward of linear attention with the delta rule, as Gated
DeltaNet (Qwen3-Next's linear-attention layers) runs it, and of gated linear
attention: the intra-chunk beta K K^T, its 64 x 64 triangular inverse, the
WY representation (w, u), the hidden states carried from chunk to chunk
(plain, gated, and the gated delta rule's), and the output per chunk.

bench/realworld_cases.py says what a case is. The sizes: batch 4 x 4096
tokens, chunks of 64 (BT, FLA's default), head dims K = V = 128, bf16
inputs, fp32 decays and A (as the hosts keep them). Gated DeltaNet as
Qwen3-Next lays it out: 16 query/key heads, 32 value heads (H = 16, HV =
32, each key head serving two value heads); DeltaNet and GLA with 16 heads.
Not varlen (cu_seqlens None). The configurations are the hosts' own where
they fix them, else the named config of the kernel's autotune list that an
H100/H200 plausibly picks (FLA's Hopper settings: IS_NVIDIA_HOPPER,
check_shared_mem() true, no TMA: FLA_USE_TMA unset).

Tensor-core kernels count FLOPs: the useful products, without the halves of
the intra-chunk (causal, or triangular) products the kernels compute and mask
off, as the attention cases do.

The kernels' `T` is `do_not_specialize` in FLA: Triton's JIT does not
specialize it, and --list gives it no hint either.

The Triton side imports the kernel's file as fla.ops.X.Y (package
tests/realworld/fla). The sample lacks fla/__init__.py's version,
fla/utils/_testing.py and fla/ops/common/backends, and fla.ops.utils's
__init__ imports every helper module: FLA_STUBS stands in for fla.utils (the
device facts above), the backend dispatchers (identity decorators),
fla.ops.utils.cache (its autotuner; the cases pass the config themselves)
and fla.ops.utils (a package of the sample's directory whose __init__ does
not run: its op.py, index.py and solve_tril.py import for real).
"""

import os

from realworld_case_rules import TRL, case, cdiv

CASES = []
PENDING = []  # cases kilnc does not compile right yet (not run), each saying why

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLA_ROOT = TRL + "fla"
FLA = FLA_ROOT + "/fla/ops/"
OP = FLA + "utils/op.py"  # exp2, safe_dot, make_tensor_descriptor: kilnc's --src


def _decorator_factory(*args, **kwargs):
    """Stand-in for a decorator that takes arguments: leaves the function."""
    return lambda fn: fn


def _decorator(fn):
    return fn


FLA_STUBS = {
    # What the kernel files (and op.py, index.py, solve_tril.py) import from
    # fla.utils, as it is on an H100/H200 with Triton 3.6 and FLA_USE_TMA unset.
    "fla.utils": dict(IS_INTEL=False, IS_NVIDIA_HOPPER=True, IS_NVIDIA_BLACKWELL=False, IS_GATHER_SUPPORTED=True,
                      IS_TMA_SUPPORTED=False, TRITON_ABOVE_3_4_0=True, TRITON_ABOVE_3_7_1=False,
                      autotune_cache_kwargs={}, check_shared_mem=lambda arch="none", tensor_idx=0: True,
                      input_guard=_decorator, tensor_cache=_decorator),
    "fla.ops.backends": dict(dispatch=_decorator_factory),
    "fla.ops.common.backends": dict(dispatch=_decorator_factory),
    "fla.ops.utils.cache": dict(fla_cache_autotune=_decorator_factory),
    # The package, without its __init__ (which imports all of its modules);
    # the names the kernel files take from it are used by their hosts only.
    "fla.ops.utils": dict(__path__=[os.path.join(REPO, FLA, "utils")], prepare_chunk_indices=None,
                          prepare_chunk_offsets=None),
}


def fla_case(*args, **rules):
    rules.setdefault("package", FLA_ROOT)
    rules.setdefault("stubs", FLA_STUBS)
    rules.setdefault("srcs", [OP])
    return case(*args, **rules)


def unit_rows(rows, dim):
    """bf16 rows of L2 norm 1, as the delta rule normalizes its queries and
    keys (use_qk_l2norm_in_kernel)."""
    def make(torch, gen):
        x = torch.randn(rows, dim, generator=gen, device="cuda")
        return (x / x.norm(dim=-1, keepdim=True)).to(torch.bfloat16).reshape(-1)
    return make


def chunk_decay(batch, length, heads, bt, step, dim=1):
    """FLA's g after chunk_local_cumsum(..., scale=RCP_LN2), laid out [B, T,
    H] (or [B, T, H, K] for GLA's per-channel gk, dim=K): within each chunk
    of bt tokens the running sum of log2-decays of up to `step` a token, so
    0 > g, decreasing along the chunk and starting afresh at the next."""
    def make(torch, gen):
        x = torch.rand(batch, length // bt, bt, heads * dim, generator=gen, device="cuda") * step
        return -x.cumsum(2).reshape(-1)
    return make


_WY_BUILT = {}  # the last build of delta_rule_chunks: (key, tensors)


def delta_rule_chunks(batch, length, heads, vheads, dk, dv, bt, step, seed=7):
    """Consistent inputs along the (gated) delta rule's chunked forward, made
    in PyTorch with their own seed, so that the arguments built from them
    agree: unit keys k [B, T, H, K] and values v [B, T, HV, V] (bf16), beta in
    (0, 1) (bf16) and g (as chunk_decay; step 0 for the ungated rule) [B, T,
    HV]; then per chunk and value head what FLA's forward computes from them:
    A = strictly lower (beta_i k_i.k_j 2^(g_i - g_j)) (fp32, [B, T, HV, BT],
    chunk_scaled_dot_kkt's output), Ai = (I + A)^-1 (bf16, solve_tril's),
    w = Ai (beta 2^g k) and u = Ai (beta v) (bf16, recompute_w_u's). A
    function of the tensor's name."""
    key = (batch, length, heads, vheads, dk, dv, bt, step, seed)

    def build(torch):
        if _WY_BUILT.get("key") != key:
            _WY_BUILT.clear()  # one build held at a time
            dev, bf16 = "cuda", torch.bfloat16
            gen = torch.Generator(device=dev).manual_seed(seed)
            nt = length // bt
            k = torch.randn(batch, length, heads, dk, generator=gen, device=dev)
            k = (k / k.norm(dim=-1, keepdim=True)).to(bf16)
            v = torch.randn(batch, length, vheads, dv, generator=gen, device=dev).to(bf16)
            beta = torch.rand(batch, length, vheads, generator=gen, device=dev).to(bf16)
            g = -(torch.rand(batch, nt, bt, vheads, generator=gen, device=dev) * step).cumsum(2)
            # [B, NT, HV, BT, ...]: a chunk of one value head (its key head
            # i_h // (HV // H)) per matrix.
            kc = (k.float().view(batch, nt, bt, heads, dk).repeat_interleave(vheads // heads, dim=3)
                  .transpose(2, 3))
            vc = v.float().view(batch, nt, bt, vheads, dv).transpose(2, 3)
            bc = beta.float().view(batch, nt, bt, vheads).transpose(2, 3)
            gc = g.transpose(2, 3)
            A = ((kc @ kc.transpose(-1, -2)) * torch.exp2(gc[..., :, None] - gc[..., None, :])
                 * bc[..., :, None]).tril(-1)
            eye = torch.eye(bt, device=dev)
            Ai = torch.linalg.solve_triangular(A + eye, eye.expand_as(A).contiguous(), upper=False)
            w = Ai @ (kc * (bc * torch.exp2(gc))[..., None])
            u = Ai @ (vc * bc[..., None])

            def rows(x, dtype):  # [B, NT, HV, BT, D] -> [B, T, HV, D], flat
                return x.transpose(2, 3).reshape(-1).to(dtype)
            _WY_BUILT.update(key=key, k=k.reshape(-1), v=v.reshape(-1), beta=beta.reshape(-1),
                             g=g.reshape(-1), A=rows(A, torch.float32), Ai=rows(Ai, bf16),
                             w=rows(w, bf16), u=rows(u, bf16))
        return _WY_BUILT
    return lambda name: (lambda torch, gen: build(torch)[name])


B, T, BT, K, V = 4, 4096, 64, 128, 128
NT = T // BT
H, HV = 16, 32  # Qwen3-Next's linear attention: 16 key heads, 32 value heads
gdn = delta_rule_chunks(B, T, H, HV, K, V, BT, 0.05)

# FLA's chunk_scaled_dot_kkt_fwd_kernel (common/chunk_scaled_dot_kkt.py):
# per chunk of 64 tokens and value head, A = beta_i k_i.k_j 2^(g_i - g_j),
# strictly lower, in fp32, as chunk_gated_delta_rule_fwd calls it
# (output_dtype fp32): Qwen3-Next's 16 key / 32 value heads of 128, batch 4
# x 4096 tokens. Autotuned over BK {32, 64, 128} x 2-8 warps x 2-4 stages:
# BK 64 (two steps over K), 4 warps, 3 stages. The host's grid (NT, B * HV).
CASES.append(fla_case(
    "fla_chunk_scaled_dot_kkt_fwd_gdn", FLA + "common/chunk_scaled_dot_kkt.py", "chunk_scaled_dot_kkt_fwd_kernel",
    "k=*bf16, g=*fp32, beta=*bf16, A=*fp32, cu_seqlens=None, chunk_indices=None, T=i32, "
    f"H={H}, HV={HV}, K={K}, BT={BT}, BK=64, IS_VARLEN=False, USE_G=True, num_warps=4, num_stages=3",
    dict(k=unit_rows(B * T * H, K), g=chunk_decay(B, T, HV, BT, 0.05),
         beta=("uniform", "bfloat16", B * T * HV, 0.0, 1.0), A=("zeros", "float32", B * T * HV * BT), T=T),
    # fp32 sums of 128 exact products in another order; exp2 to an ulp.
    (NT, B * HV), ["A"], bytes=2 * B * T * H * K + 6 * B * T * HV + 4 * B * T * HV * BT, tol=1e-5,
    flops=B * NT * HV * BT * BT * K))

# FLA's merge_16x16_to_64x64_inverse_kernel (utils/solve_tril.py): (I + A)^-1
# per 64-token chunk, the four 16 x 16 diagonal blocks by forward
# substitution, then the blocks below them by 16 x 16 products, as
# solve_tril runs it for BT = 64 in Gated DeltaNet's forward (output_dtype
# bf16, k's): A the kkt kernel's output for the inputs above (beta_i k_i.k_j
# with decays, unit keys: well conditioned), 32 value heads, batch 4 x 4096.
# USE_TMA False (IS_TMA_SUPPORTED needs FLA_USE_TMA=1), so DOT_PRECISION
# 'ieee' (its only config value then): fp32 products on FMAs, no tensor cores,
# so GB/s over the blocks read and written (10 of the 16). Autotuned over 2-8
# warps x 2-5 stages: 4 warps, 2 stages. Ai zeroed, as the host allocates
# it (the blocks above the diagonal stay zero). The host's grid (NT, B * H).
CASES.append(fla_case(
    "fla_solve_tril_64_gdn", FLA + "utils/solve_tril.py", "merge_16x16_to_64x64_inverse_kernel",
    "A=*fp32, Ai=*bf16, cu_seqlens=None, chunk_indices=None, T=i32, "
    f"H={HV}, BT={BT}, USE_TMA=False, IS_VARLEN=False, DOT_PRECISION='ieee', num_warps=4, num_stages=2",
    dict(A=gdn("A"), Ai=("zeros", "bfloat16", B * T * HV * BT), T=T),
    # fp32 products and row sums in another order; bf16 out (2^-8).
    (NT, B * HV), ["Ai"], bytes=(4 + 2) * B * T * HV * BT * 10 // 16, tol=1e-2))

# FLA's chunk_gated_delta_rule_fwd_kernel_h_blockdim64 (common/chunk_delta_h.py),
# the sequential part of Gated DeltaNet's forward: per value head and 32
# columns of V, the [128, 32] state (two [64, 32] fp32 blocks) carried over
# the 64 chunks: v_new = u - w h (saved), h = 2^g_last h + k^T (2^(g_last - g)
# v_new), each chunk's state stored in bf16. As a prefill with a cached state
# calls it: initial state in, final state out (fp32). Qwen3-Next's heads,
# batch 4 x 4096 tokens; k, w, u and g consistent (w and u from k, v, beta
# and g as the forward computes them, so that the recurrence is the delta
# rule's, a contraction). Autotuned (Hopper: 2 or 4 warps, 2-4 stages, BV
# {32, 64}): BV 32 (512 programs), 4 warps, 2 stages. Grid: the host's
# (cdiv(V, BV) * B * HV,).
BV = 32
CASES.append(fla_case(
    "fla_chunk_gated_delta_rule_fwd_h", FLA + "common/chunk_delta_h.py",
    "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
    "k=*bf16, v=*bf16, w=*bf16, v_new=*bf16, g=*fp32, gk=None, h=*bf16, h0=*fp32, ht=*fp32, cu_seqlens=None, "
    f"chunk_offsets=None, T=i32, H={H}, HV={HV}, K={K}, V={V}, BT={BT}, BV={BV}, USE_G=True, USE_GK=False, "
    "USE_INITIAL_STATE=True, STORE_FINAL_STATE=True, SAVE_NEW_VALUE=True, STATE_V_FIRST=False, IS_VARLEN=False, "
    "num_warps=4, num_stages=2",
    dict(k=gdn("k"), v=gdn("u"), w=gdn("w"), v_new=("zeros", "bfloat16", B * T * HV * V), g=gdn("g"),
         h=("zeros", "bfloat16", B * NT * HV * K * V), h0=("randn", "float32", B * HV * K * V, 0.1),
         ht=("zeros", "float32", B * HV * K * V), T=T),
    # fp32 sums in another order and exp2 to an ulp, then v_new rounded to
    # bf16 before it enters the state: a rounding (2^-8) that moves the
    # later states a little; bf16 h and v_new.
    (cdiv(V, BV) * B * HV,), ["h", "v_new", "ht"],
    bytes=2 * B * T * H * K + 2 * B * T * HV * (K + 2 * V) + 4 * B * T * HV + 2 * B * NT * HV * K * V
    + 2 * 4 * B * HV * K * V,
    tol=1e-2, flops=4 * B * NT * HV * BT * K * V))

# FLA's chunk_fwd_kernel_o (common/chunk_o.py), Gated DeltaNet's output:
# per chunk and value head, o = scale (2^g q h + (causal 2^(g_i - g_j) q k^T)
# v_new), g as above (USE_G), bf16 states h [B, NT, HV, K, V]: Qwen3-Next's
# heads (q and k per key head, shared by two value heads), batch 4 x 4096,
# unit q and k. Autotuned: the first of its configs, BK = BV = 128 (one step
# over K, q k^T computed once per chunk), 8 warps, 3 stages. The host's grid
# (cdiv(V, BV), NT, B * HV). FLOPs: q h, and the causal halves of q k^T and
# A v.
CASES.append(fla_case(
    "fla_chunk_fwd_o_gdn", FLA + "common/chunk_o.py", "chunk_fwd_kernel_o",
    "q=*bf16, k=*bf16, v=*bf16, h=*bf16, g=*fp32, g_gamma=None, o=*bf16, cu_seqlens=None, chunk_indices=None, "
    f"scale=fp32, T=i32, H={H}, HV={HV}, K={K}, V={V}, BT={BT}, BK=128, BV=128, USE_G=True, USE_G_GAMMA=False, "
    "STATE_V_FIRST=False, IS_VARLEN=False, num_warps=8, num_stages=3",
    dict(q=unit_rows(B * T * H, K), k=unit_rows(B * T * H, K), v=("randn", "bfloat16", B * T * HV * V),
         h=("randn", "bfloat16", B * NT * HV * K * V, 0.1), g=chunk_decay(B, T, HV, BT, 0.05),
         o=("zeros", "bfloat16", B * T * HV * V), scale=K ** -0.5, T=T),
    # fp32 sums in another order, exp2 to an ulp; A rounded to bf16 for the
    # second dot; bf16 out (2^-8).
    (cdiv(V, 128), NT, B * HV), ["o"],
    bytes=2 * 2 * B * T * H * K + 2 * 2 * B * T * HV * V + 2 * B * NT * HV * K * V + 4 * B * T * HV,
    tol=1e-2, flops=B * NT * HV * (2 * BT * K * V + BT * BT * K + BT * BT * V)))

# DeltaNet (16 heads of 128; no gate): inputs of its chunked forward.
HD = 16
delta = delta_rule_chunks(B, T, HD, HD, K, V, BT, 0.0)

# FLA's recompute_w_u_fwd_kernel (delta_rule/wy_fast.py): the WY
# representation per chunk, w = A (beta k) and u = A (beta v), A = (I +
# beta K K^T strictly lower)^-1 in bf16 (solve_tril's output for the
# ungated rule's k and beta), as prepare_wy_repr_fwd calls it: DeltaNet's 16
# heads of 128, batch 4 x 4096. The host's BK = BV = 64 (CONST_TILING 64:
# check_shared_mem()). Autotuned over 2-8 warps x 2-4 stages: 4 warps, 3
# stages. The host's grid (NT, B * H). FLOPs: A is lower triangular, half of
# each 64 x 64 product.
CASES.append(fla_case(
    "fla_recompute_w_u_fwd_delta_rule", FLA + "delta_rule/wy_fast.py", "recompute_w_u_fwd_kernel",
    "k=*bf16, v=*bf16, beta=*bf16, w=*bf16, u=*bf16, A=*bf16, cu_seqlens=None, chunk_indices=None, T=i32, "
    f"H={HD}, K={K}, V={V}, BT={BT}, BK=64, BV=64, IS_VARLEN=False, num_warps=4, num_stages=3",
    dict(k=delta("k"), v=delta("v"), beta=delta("beta"), w=("zeros", "bfloat16", B * T * HD * K),
         u=("zeros", "bfloat16", B * T * HD * V), A=delta("Ai"), T=T),
    # fp32 sums in another order; bf16 out (2^-8).
    (NT, B * HD), ["w", "u"], bytes=2 * 2 * B * T * HD * (K + V) + 2 * B * T * HD * (1 + BT), tol=1e-2,
    flops=B * NT * HD * BT * BT * (K + V)))

# chunk_fwd_kernel_o without a gate (g and g_gamma None), as DeltaNet's
# chunk_delta_rule_fwd calls it: 16 heads of 128 (H = HV), batch 4 x 4096,
# unit q and k. The second of its autotune configs, BK = BV = 64, 4 warps, 3
# stages (the K loop of two steps, two V blocks: 8192 programs). Grid
# (cdiv(V, BV), NT, B * H). FLOPs as above.
CASES.append(fla_case(
    "fla_chunk_fwd_o_delta_rule", FLA + "common/chunk_o.py", "chunk_fwd_kernel_o",
    "q=*bf16, k=*bf16, v=*bf16, h=*bf16, g=None, g_gamma=None, o=*bf16, cu_seqlens=None, chunk_indices=None, "
    f"scale=fp32, T=i32, H={HD}, HV={HD}, K={K}, V={V}, BT={BT}, BK=64, BV=64, USE_G=False, USE_G_GAMMA=False, "
    "STATE_V_FIRST=False, IS_VARLEN=False, num_warps=4, num_stages=3",
    dict(q=unit_rows(B * T * HD, K), k=unit_rows(B * T * HD, K), v=("randn", "bfloat16", B * T * HD * V),
         h=("randn", "bfloat16", B * NT * HD * K * V, 0.1), o=("zeros", "bfloat16", B * T * HD * V),
         scale=K ** -0.5, T=T),
    # fp32 sums in another order; A rounded to bf16 for the second dot;
    # bf16 out (2^-8).
    (cdiv(V, 64), NT, B * HD), ["o"],
    bytes=2 * 2 * B * T * HD * K + 2 * 2 * B * T * HD * V + 2 * B * NT * HD * K * V, tol=1e-2,
    flops=B * NT * HD * (2 * BT * K * V + BT * BT * K + BT * BT * V)))

# FLA's chunk_fwd_kernel_h (common/chunk_h.py), the chunk states of gated
# linear attention: per (K block, V block, head), h = 2^gk_last h + (k
# 2^(gk_last - gk))^T v over the 64 chunks, each chunk's state stored in
# bf16, as chunk_gla_fwd calls it (gk the per-channel log2-decays, fp32
# [B, T, H, K]; no initial or final state; states_in_fp32 False): 16 heads of
# 128, batch 4 x 4096, k and v N(0, 1). Autotuned over BK, BV {32, 64} x 1-8
# warps x 2-4 stages: 64 x 64, 4 warps, 2 stages. The host's grid
# (cdiv(K, BK), cdiv(V, BV), B * H).
CASES.append(fla_case(
    "fla_chunk_fwd_h_gla", FLA + "common/chunk_h.py", "chunk_fwd_kernel_h",
    "k=*bf16, v=*bf16, h=*bf16, g=None, g_gamma=None, gk=*fp32, gv=None, h0=None, ht=None, cu_seqlens=None, "
    f"split_offsets=None, T=i32, H={HD}, K={K}, V={V}, BT={BT}, BS={BT}, BK=64, BV=64, USE_G=False, "
    "USE_G_GAMMA=False, USE_GK=True, USE_GV=False, USE_INITIAL_STATE=False, STORE_FINAL_STATE=False, "
    "IS_VARLEN=False, STATE_V_FIRST=False, num_warps=4, num_stages=2",
    dict(k=("randn", "bfloat16", B * T * HD * K), v=("randn", "bfloat16", B * T * HD * V),
         h=("zeros", "bfloat16", B * NT * HD * K * V), gk=chunk_decay(B, T, HD, BT, 0.05, dim=K), T=T),
    # fp32 sums in another order; k scaled by exp2 (to an ulp) and rounded
    # to bf16 before the dot; bf16 states (2^-8).
    (cdiv(K, 64), cdiv(V, 64), B * HD), ["h"],
    bytes=2 * B * T * HD * (K + V) + 4 * B * T * HD * K + 2 * B * NT * HD * K * V, tol=1e-2,
    flops=2 * B * NT * HD * BT * K * V))

# chunk_fwd_kernel_h with a scalar decay per token and head (USE_G: simple
# GLA / RetNet-style, chunk_simple_gla_fwd's call), as a prefill with a
# cached state runs it: initial state in and final state out (fp32), bf16
# chunk states; 16 heads of 128, batch 4 x 4096. The same config and grid.
CASES.append(fla_case(
    "fla_chunk_fwd_h_simple_gla", FLA + "common/chunk_h.py", "chunk_fwd_kernel_h",
    "k=*bf16, v=*bf16, h=*bf16, g=*fp32, g_gamma=None, gk=None, gv=None, h0=*fp32, ht=*fp32, cu_seqlens=None, "
    f"split_offsets=None, T=i32, H={HD}, K={K}, V={V}, BT={BT}, BS={BT}, BK=64, BV=64, USE_G=True, "
    "USE_G_GAMMA=False, USE_GK=False, USE_GV=False, USE_INITIAL_STATE=True, STORE_FINAL_STATE=True, "
    "IS_VARLEN=False, STATE_V_FIRST=False, num_warps=4, num_stages=2",
    dict(k=("randn", "bfloat16", B * T * HD * K), v=("randn", "bfloat16", B * T * HD * V),
         h=("zeros", "bfloat16", B * NT * HD * K * V), g=chunk_decay(B, T, HD, BT, 0.05),
         h0=("randn", "float32", B * HD * K * V), ht=("zeros", "float32", B * HD * K * V), T=T),
    # fp32 sums in another order; v scaled by exp2 (to an ulp) and rounded
    # to bf16 before the dot; bf16 states (2^-8).
    (cdiv(K, 64), cdiv(V, 64), B * HD), ["h", "ht"],
    bytes=2 * B * T * HD * (K + V) + 4 * B * T * HD + 2 * B * NT * HD * K * V + 2 * 4 * B * HD * K * V,
    tol=1e-2, flops=2 * B * NT * HD * BT * K * V))

# The chunked backward of simple GLA (chunk_simple_gla_bwd: a scalar
# log2-decay g per token and head, as chunk_decay; 16 heads of 128, H = HV,
# batch 4 x 4096, unit q and k, bf16 states h and dh as its forward and
# chunk_bwd_dh leave them, states_in_fp32 False): the state gradients dh
# carried backwards over the chunks, then dv and (dq, dk, dg) per chunk.
# Gradients (do, dht) and the states N(0, 1) and N(0, 0.1).

# FLA's chunk_bwd_kernel_dh (common/chunk_h.py): per (K block, V block,
# head), from the last chunk to the first, dh stored (bf16) then dh = 2^g_last
# dh + (scale 2^g q)^T do, as chunk_bwd_dh calls it for simple GLA (USE_G;
# BS = BT, NG 1): with a final-state gradient dht in and the initial state's
# dh0 out (fp32), as for a prefill with a cached state. Autotuned over BK, BV
# {32, 64} x 1-8 warps x 2-4 stages: 64 x 64, 4 warps, 2 stages, as the
# forward's chunk_fwd_kernel_h. The host's grid (cdiv(K, BK), cdiv(V, BV),
# B * H).
CASES.append(fla_case(
    "fla_bwd_chunk_dh_simple_gla", FLA + "common/chunk_h.py", "chunk_bwd_kernel_dh",
    "q=*bf16, g=*fp32, g_gamma=None, gk=None, gv=None, do=*bf16, dh=*bf16, dht=*fp32, dh0=*fp32, cu_seqlens=None, "
    f"split_offsets=None, scale=fp32, T=i32, HQ={HD}, H={HD}, K={K}, V={V}, BT={BT}, BS={BT}, BK=64, BV=64, NG=1, "
    "USE_G=True, USE_G_GAMMA=False, USE_GK=False, USE_GV=False, STORE_INITIAL_STATE_GRADIENT=True, "
    "USE_FINAL_STATE_GRADIENT=True, IS_VARLEN=False, STATE_V_FIRST=False, num_warps=4, num_stages=2",
    dict(q=unit_rows(B * T * HD, K), g=chunk_decay(B, T, HD, BT, 0.05), do=("randn", "bfloat16", B * T * HD * V),
         dh=("zeros", "bfloat16", B * NT * HD * K * V), dht=("randn", "float32", B * HD * K * V),
         dh0=("zeros", "float32", B * HD * K * V), scale=K ** -0.5, T=T),
    # fp32 sums in another order; q scaled (and by exp2, to an ulp) and
    # rounded to bf16 before the dot; bf16 states (2^-8).
    (cdiv(K, 64), cdiv(V, 64), B * HD), ["dh", "dh0"],
    bytes=2 * B * T * HD * (K + V) + 4 * B * T * HD + 2 * B * NT * HD * K * V + 2 * 4 * B * HD * K * V,
    tol=1e-2, flops=2 * B * NT * HD * BT * K * V))

# FLA's chunk_bwd_kernel_dv (common/chunk_o.py): per chunk and head, dv =
# 2^(g_last - g) k dh + (causal scale 2^(g_j - g_i) k q^T) do, as chunk_bwd_dv
# calls it for simple GLA (USE_G): dh bf16 [B, NT, H, K, V]. The host's BK =
# BV = 128 (CONST_TILING 128: check_shared_mem('hopper')), one step over K.
# Autotuned (Hopper: 2 or 4 warps, 2-4 stages): 4 warps, 2 stages (a loop of
# one step: more stages buy nothing). The host's grid (cdiv(V, BV), NT,
# B * HV). FLOPs: k dh, and the causal halves of k q^T and A do.
CASES.append(fla_case(
    "fla_bwd_chunk_dv_simple_gla", FLA + "common/chunk_o.py", "chunk_bwd_kernel_dv",
    "q=*bf16, k=*bf16, g=*fp32, g_gamma=None, do=*bf16, dv=*bf16, dh=*bf16, cu_seqlens=None, chunk_indices=None, "
    f"scale=fp32, T=i32, H={HD}, HV={HD}, K={K}, V={V}, BT={BT}, BK=128, BV=128, USE_G=True, USE_G_GAMMA=False, "
    "IS_VARLEN=False, STATE_V_FIRST=False, num_warps=4, num_stages=2",
    dict(q=unit_rows(B * T * HD, K), k=unit_rows(B * T * HD, K), g=chunk_decay(B, T, HD, BT, 0.05),
         do=("randn", "bfloat16", B * T * HD * V), dv=("zeros", "bfloat16", B * T * HD * V),
         dh=("randn", "bfloat16", B * NT * HD * K * V, 0.1), scale=K ** -0.5, T=T),
    # fp32 sums in another order, exp2 to an ulp; A rounded to bf16 for the
    # second dot; bf16 out (2^-8).
    (cdiv(V, 128), NT, B * HD), ["dv"],
    bytes=2 * 2 * B * T * HD * K + 2 * 2 * B * T * HD * V + 2 * B * NT * HD * K * V + 4 * B * T * HD,
    tol=1e-2, flops=B * NT * HD * (2 * BT * K * V + BT * BT * K + BT * BT * V)))

# FLA's chunk_bwd_kernel_dqkwg (common/chunk_o.py): per chunk and head, dq =
# scale 2^g do h^T + ds k, dk = 2^(g_last - g) v dh^T + ds^T q (ds = causal
# scale 2^(g_i - g_j) do v^T, rounded to bf16) and dg (fp32, [NK, B, T, H],
# NK = 1) from them and from h . dh, as chunk_bwd_dqkwg calls it for simple
# GLA (USE_G; no w: USE_DW False, dw and dv None). The host's BK = BV = 128
# (CONST_TILING 128 on Hopper); FLA refuses the gated call on Hopper with
# Triton in [3.4, 3.7.1) (its #640, a miscompile of tl.trans(b_ds) reported
# at BK 64 only; 32 and 128 pass): at BK 128 Triton 3.6 is taken as the
# reference, though it is in that range (a mismatch: suspect it). Autotuned (Hopper: 2 or 4 warps, 2-4 stages): 4
# warps (two [64, 128] fp32 accumulators and a [64, 64]: both compilers
# spill at 255 registers; 2 warps would hold twice as much a thread), 2
# stages (the V loop has one step). The host's grid (cdiv(K, BK), NT, B * HV).
# FLOPs: do h, v dh, and the causal halves of do v^T, ds k and ds^T q.
CASES.append(fla_case(
    "fla_bwd_chunk_dqkwg_simple_gla", FLA + "common/chunk_o.py", "chunk_bwd_kernel_dqkwg",
    "q=*bf16, k=*bf16, v=*bf16, g=*fp32, g_gamma=None, h=*bf16, do=*bf16, dh=*bf16, dq=*bf16, dk=*bf16, dw=None, "
    f"dv=None, dg=*fp32, cu_seqlens=None, chunk_indices=None, scale=fp32, B={B}, T=i32, H={HD}, HV={HD}, K={K}, "
    f"V={V}, BT={BT}, BK=128, BV=128, USE_G=True, USE_G_GAMMA=False, USE_DW=False, STATE_V_FIRST=False, "
    "IS_VARLEN=False, num_warps=4, num_stages=2",
    dict(q=unit_rows(B * T * HD, K), k=unit_rows(B * T * HD, K), v=("randn", "bfloat16", B * T * HD * V),
         g=chunk_decay(B, T, HD, BT, 0.05), h=("randn", "bfloat16", B * NT * HD * K * V, 0.1),
         do=("randn", "bfloat16", B * T * HD * V), dh=("randn", "bfloat16", B * NT * HD * K * V, 0.1),
         dq=("zeros", "bfloat16", B * T * HD * K), dk=("zeros", "bfloat16", B * T * HD * K),
         dg=("zeros", "float32", cdiv(K, 128) * B * T * HD), scale=K ** -0.5, T=T),
    # fp32 sums in another order (h . dh over 16384 products), exp2 to an
    # ulp; ds rounded to bf16 for its dots; bf16 dq, dk (2^-8).
    (cdiv(K, 128), NT, B * HD), ["dq", "dk", "dg"],
    bytes=2 * 4 * B * T * HD * K + 2 * 2 * B * T * HD * V + 2 * 2 * B * NT * HD * K * V + 2 * 4 * B * T * HD,
    tol=1e-2, flops=B * NT * HD * (4 * BT * K * V + BT * BT * V + 2 * BT * BT * K)))
