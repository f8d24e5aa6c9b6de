"""Real-world cases: Mamba-2's backward (state-spaces/mamba, tests/realworld/
mamba, mamba_ssm/ops/triton/). bench/realworld_cases.py says what a case is.

The chunked-scan backward's tensor-core kernels, as
_mamba_chunk_scan_combined_bwd calls them (ssd_combined.py): dx with the
chunk-state gradient (_chunk_scan_chunk_state_bwd_dx), dB
(_chunk_state_bwd_db), dC (_chunk_scan_bwd_dC), d(C B^T) (_chunk_scan_bwd_dcb)
and the intra-chunk ddA_cumsum (_chunk_scan_bwd_ddAcs_stable). Mamba2-2.7B
(80 heads of 64, state 128, one group, chunks of 256), batch 2 x 4096 tokens,
bf16 activations as Mamba2's default path (mamba_split_conv1d_scan_combined,
rmsnorm) hands them over: x, B and C slices of the conv output rows
(5120 + 2 x 128 wide) and dx a slice of dxBC of the same width, dout the gated
norm's contiguous gradient; dt and dA_cumsum [batch, heads, chunks, 256] fp32
(_chunk_cumsum_fwd's), CB fp32, the states and state gradients in x's dtype
(state_dtype unset), D per head in fp32, no seq_idx, the non-deterministic
(atomic) reductions. Blocks and strides as the launchers compute them:
BLOCK_SIZE_K max(next_power_of_2(headdim), 16) = 64, BLOCK_SIZE_DSTATE 128,
nheads_per_program max(min(ceil(batch * nchunks * nheads / 132 SMs), 80), 1)
= 20 (4 splits). All are autotuned: dC, dB, dCB and ddAcs take the first
config of their lists (its tile fits the state, 128, or the chunk); dx's first
config is 128 x 256 x 64 (8 warps), a BLOCK_SIZE_N four times the head dim,
so it takes the list's first of N 64, 128 x 64 x 32 (4 stages, 4 warps).
Buffers the autotune pre_hooks zero (the atomic targets) are reset.
"""

from realworld_case_rules import SMS, TRL, case, cdiv, decay_cumsum, strides

CASES = []

MAMBA = TRL + "mamba/mamba_ssm/ops/triton/"
PKG = TRL + "mamba"
B, S, H, P, G, NS, L = 2, 4096, 80, 64, 1, 128, 256
NC = S // L
XBC = H * P + 2 * G * NS  # the conv output's row: x, B, C
HPP = max(min(cdiv(B * NC * H, SMS), H // G), 1)  # nheads_per_program
NSPLIT = cdiv(H // G, HPP)
BLOCK_K = 64  # max(next_power_of_2(headdim), 16)


def named(prefix, names, values):
    return {f"stride_{prefix}_{n}": v for n, v in zip(names, values)}


def sig_strides(*groups):
    """`stride_..=i32, ` for the names of each (prefix, names) group."""
    return "".join(f"stride_{p}_{n}=i32, " for p, names in groups for n in names)


# [batch, seqlen, heads, headdim] or [batch, seqlen, groups, dstate] slices of
# the conv output's rows, XBC apart; dout contiguous.
SLICE_X = (S * XBC, XBC, P, 1)
SLICE_BC = (S * XBC, XBC, NS, 1)
DOUT = tuple(strides(B, S, H, P))
# dt, dA_cumsum [batch, heads, chunks, L]: the host passes their chunk stride
# before their head stride.
BHCL = strides(B, H, NC, L)
CHUNKED = (BHCL[0], BHCL[2], BHCL[1], BHCL[3])
STATES = tuple(strides(B, NC, H, P, NS))  # (d)states [batch, chunks, heads, hdim, dstate]
CB = tuple(strides(B, NC, G, L, L))
SEQ = ("batch", "seqlen")
BSHD = ("batch", "seqlen", "head", "hdim")
DT4 = ("batch", "chunk", "head", "csize")

NX = (B * S - 1) * XBC + H * P  # a buffer holding x's slice (or dx's)
NBC = (B * S - 1) * XBC + G * NS  # B's or C's
NSTATES = B * NC * H * P * NS
NBHS = B * H * S
DT_SPEC = ("uniform", "float32", NBHS, 0.001, 0.1)  # softplus(dt + dt_bias) as Mamba2 initializes it
DA_SPEC = decay_cumsum(B * H * NC, L, 0.05)


# dC: dout @ prev_states per chunk and head, scaled by exp(dA_cumsum), summed
# over the 20 heads of a program (fp32 [batch, seqlen, 4 splits, groups,
# dstate]), and ddA_cumsum_prev = rowsum(dC * C) by atomic_add (one program
# per address). 32 x 128 blocks (64 deep), 3 stages, 4 warps: 8 x 32 x 4
# programs.
DC = strides(B, S, NSPLIT, G, NS)
ints = dict(chunk_size=L, dstate=NS, hdim=P, batch=B, seqlen=S, nheads=H, nheads_per_program=HPP,
            ngroups=G)
ints.update(named("dout", BSHD, DOUT))
ints.update(named("prev_states", ("batch", "chunk", "head", "hdim", "dstate"), STATES))
ints.update(named("C", ("batch", "seqlen", "head", "dstate"), SLICE_BC))
ints.update(named("dA_cs", DT4, CHUNKED))
ints.update(named("seq_idx", SEQ, (0, 0)))
ints.update(named("dc", ("batch", "seqlen", "split", "group", "dstate"), DC))
ints.update(named("ddA_cs", DT4, CHUNKED))
ints["stride_ddA_tile"] = 0
CASES.append(case(
    "mamba2_chunk_scan_bwd_dc_bf16", MAMBA + "ssd_chunk_scan.py", "_chunk_scan_bwd_dc_kernel",
    "dout_ptr=*bf16, prev_states_ptr=*bf16, C_ptr=*bf16, dA_cumsum_ptr=*fp32, seq_idx_ptr=None, "
    "dc_ptr=*fp32, ddA_cumsum_ptr=*fp32, chunk_size=i32, dstate=i32, hdim=i32, batch=i32, seqlen=i32, "
    "nheads=i32, nheads_per_program=i32, ngroups=i32, "
    + sig_strides(("dout", BSHD), ("prev_states", ("batch", "chunk", "head", "hdim", "dstate")),
                  ("C", ("batch", "seqlen", "head", "dstate")), ("dA_cs", DT4), ("seq_idx", SEQ),
                  ("dc", ("batch", "seqlen", "split", "group", "dstate")), ("ddA_cs", DT4))
    + "stride_ddA_tile=i32, HAS_DDA_CS=True, HAS_SEQ_IDX=False, DETERMINISTIC_REDUCTION=False, "
    f"BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, BLOCK_SIZE_K={BLOCK_K}, num_warps=4, num_stages=3",
    dict(dout_ptr=("randn", "bfloat16", B * S * H * P), prev_states_ptr=("randn", "bfloat16", NSTATES),
         C_ptr=("randn", "bfloat16", NBC), dA_cumsum_ptr=DA_SPEC,
         dc_ptr=("zeros", "float32", B * S * NSPLIT * G * NS), ddA_cumsum_ptr=("zeros", "float32", NBHS),
         **ints),
    # fp32 sums of bf16 products in another order, exp to an ulp or so.
    (cdiv(L, 32) * cdiv(NS, 128), B * NC, NSPLIT * G), ["dc_ptr", "ddA_cumsum_ptr"],
    bytes=2 * B * S * H * P + 2 * NSTATES + 2 * B * S * G * NS + 4 * NBHS + 4 * B * S * NSPLIT * G * NS
    + 4 * NBHS,
    tol=1e-4, flops=2 * B * S * H * P * NS, reset=["ddA_cumsum_ptr"], package=PKG))

# dB: x @ dstates per chunk and head, scaled by exp(dA_last - dA_cumsum) * dt,
# summed over a program's 20 heads (fp32 [batch, seqlen, 4 splits, groups,
# dstate]), and ddA_cumsum = rowsum(dB * B) by atomic_add, shifted one on.
# 32 x 128 blocks (64 deep), 3 stages, 4 warps.
ints = dict(chunk_size=L, dstate=NS, hdim=P, batch=B, seqlen=S, nheads=H, nheads_per_program=HPP,
            ngroups=G)
ints.update(named("x", BSHD, SLICE_X))
ints.update(dict(zip(("stride_dstates_batch", "stride_dstates_chunk", "stride_states_head",
                      "stride_states_hdim", "stride_states_dstate"), STATES)))
ints.update(named("b", ("batch", "seqlen", "head", "dstate"), SLICE_BC))
ints.update(named("dt", DT4, CHUNKED))
ints.update(named("dA_cs", DT4, CHUNKED))
ints.update(named("seq_idx", SEQ, (0, 0)))
ints.update(named("db", ("batch", "seqlen", "split", "group", "dstate"), DC))
ints.update(named("ddA_cs", DT4, CHUNKED))
ints["stride_ddA_tile"] = 0
CASES.append(case(
    "mamba2_chunk_state_bwd_db_bf16", MAMBA + "ssd_chunk_state.py", "_chunk_state_bwd_db_kernel",
    "x_ptr=*bf16, dstates_ptr=*bf16, b_ptr=*bf16, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, seq_idx_ptr=None, "
    "db_ptr=*fp32, ddA_cumsum_ptr=*fp32, chunk_size=i32, dstate=i32, hdim=i32, batch=i32, seqlen=i32, "
    "nheads=i32, nheads_per_program=i32, ngroups=i32, "
    + sig_strides(("x", BSHD))
    + "stride_dstates_batch=i32, stride_dstates_chunk=i32, stride_states_head=i32, stride_states_hdim=i32, "
    "stride_states_dstate=i32, "
    + sig_strides(("b", ("batch", "seqlen", "head", "dstate")), ("dt", DT4), ("dA_cs", DT4), ("seq_idx", SEQ),
                  ("db", ("batch", "seqlen", "split", "group", "dstate")), ("ddA_cs", DT4))
    + "stride_ddA_tile=i32, HAS_DDA_CS=True, HAS_SEQ_IDX=False, DETERMINISTIC_REDUCTION=False, "
    f"BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, BLOCK_SIZE_K={BLOCK_K}, num_warps=4, num_stages=3",
    dict(x_ptr=("randn", "bfloat16", NX), dstates_ptr=("randn", "bfloat16", NSTATES),
         b_ptr=("randn", "bfloat16", NBC), dt_ptr=DT_SPEC, dA_cumsum_ptr=DA_SPEC,
         db_ptr=("zeros", "float32", B * S * NSPLIT * G * NS), ddA_cumsum_ptr=("zeros", "float32", NBHS),
         **ints),
    # fp32 sums of bf16 products in another order, exp to an ulp or so.
    (cdiv(L, 32) * cdiv(NS, 128), B * NC, NSPLIT * G), ["db_ptr", "ddA_cumsum_ptr"],
    bytes=2 * B * S * H * P + 2 * NSTATES + 2 * B * S * G * NS + 2 * 4 * NBHS
    + 4 * B * S * NSPLIT * G * NS + 4 * NBHS,
    tol=1e-4, flops=2 * B * S * H * P * NS, reset=["ddA_cumsum_ptr"], package=PKG))

# dCB: dout @ x^T per chunk (causal: blocks above the diagonal store zeros),
# scaled by dt and exp(dA_m - dA_n), summed over a program's 20 heads (fp32
# [batch, chunks, 4 splits, groups, L, L]); no CB, so no ddA (HAS_DDA_CS
# False, as the combined backward calls it). 32 x 128 blocks (64 deep), 3
# stages, 4 warps: 16 x 32 x 4 programs. FLOPs: the causal half.
ints = dict(chunk_size=L, hdim=P, batch=B, seqlen=S, nheads=H, nheads_per_program=HPP, ngroups=G)
ints.update(named("x", BSHD, SLICE_X))
ints.update(named("dout", BSHD, DOUT))
ints.update(named("cb", ("batch", "chunk", "head", "csize_m", "csize_n"), (0, 0, 0, 0, 0)))
ints.update(named("dt", DT4, CHUNKED))
ints.update(named("dA_cs", DT4, CHUNKED))
ints.update(named("seq_idx", SEQ, (0, 0)))
ints.update(named("dcb", ("batch", "chunk", "split", "group", "csize_m", "csize_n"),
                  strides(B, NC, NSPLIT, G, L, L)))
ints.update(named("ddA_cs", ("batch", "chunk", "head", "csize_m", "csize_n"), (0, 0, 0, 0, 0)))
CASES.append(case(
    "mamba2_chunk_scan_bwd_dcb_bf16", MAMBA + "ssd_chunk_scan.py", "_chunk_scan_bwd_dcb_kernel",
    "x_ptr=*bf16, dout_ptr=*bf16, cb_ptr=None, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, seq_idx_ptr=None, "
    "dcb_ptr=*fp32, ddA_cumsum_ptr=None, chunk_size=i32, hdim=i32, batch=i32, seqlen=i32, nheads=i32, "
    "nheads_per_program=i32, ngroups=i32, "
    + sig_strides(("x", BSHD), ("dout", BSHD), ("cb", ("batch", "chunk", "head", "csize_m", "csize_n")),
                  ("dt", DT4), ("dA_cs", DT4), ("seq_idx", SEQ),
                  ("dcb", ("batch", "chunk", "split", "group", "csize_m", "csize_n")),
                  ("ddA_cs", ("batch", "chunk", "head", "csize_m", "csize_n")))
    + f"HAS_DDA_CS=False, HAS_SEQ_IDX=False, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128, BLOCK_SIZE_K={BLOCK_K}, "
    "num_warps=4, num_stages=3",
    dict(x_ptr=("randn", "bfloat16", NX), dout_ptr=("randn", "bfloat16", B * S * H * P), dt_ptr=DT_SPEC,
         dA_cumsum_ptr=DA_SPEC, dcb_ptr=("zeros", "float32", B * NC * NSPLIT * G * L * L), **ints),
    # fp32 sums of bf16 products in another order, exp to an ulp or so.
    (cdiv(L, 32) * cdiv(L, 128), B * NC, NSPLIT * G), ["dcb_ptr"],
    bytes=2 * 2 * B * S * H * P + 2 * 4 * NBHS + 4 * B * NC * NSPLIT * G * L * L,
    tol=1e-4, flops=B * NC * H * L * L * P, package=PKG))

# ddA_cumsum within a chunk: (dout @ x^T) * dt * CB * exp(dA_m - dA_n), its
# causal part cumsummed along the row and summed down the columns, one row of
# [batch, heads, chunks, 256 / 32, L] per 32-row block (fp32, each written
# once). 32 x 32 blocks (64 deep), 3 stages, 4 warps: 8 x 32 x 80 programs.
# FLOPs: the causal half of dout @ x^T.
ints = dict(chunk_size=L, hdim=P, batch=B, seqlen=S, nheads_ngroups_ratio=H // G)
ints.update(named("x", BSHD, SLICE_X))
ints.update(named("dout", BSHD, DOUT))
ints.update(named("dt", DT4, CHUNKED))
ints.update(named("dA_cs", DT4, CHUNKED))
ints.update(named("cb", ("batch", "chunk", "head", "csize_m", "csize_n"), CB))
MB = cdiv(L, 32)  # the host's rows: cdiv(chunk_size, BLOCK_SIZE_M_min 32)
DDA = strides(B, H, NC, MB, L)
ints.update(named("ddA_cs", ("batch", "chunk", "head", "csize_m", "csize_n"),
                  (DDA[0], DDA[2], DDA[1], DDA[3], DDA[4])))
CASES.append(case(
    "mamba2_chunk_scan_bwd_ddAcs_stable_bf16", MAMBA + "ssd_chunk_scan.py", "_chunk_scan_bwd_ddAcs_stable_kernel",
    "x_ptr=*bf16, dout_ptr=*bf16, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, cb_ptr=*fp32, ddA_cumsum_ptr=*fp32, "
    "chunk_size=i32, hdim=i32, batch=i32, seqlen=i32, nheads_ngroups_ratio=i32, "
    + sig_strides(("x", BSHD), ("dout", BSHD), ("dt", DT4), ("dA_cs", DT4),
                  ("cb", ("batch", "chunk", "head", "csize_m", "csize_n")),
                  ("ddA_cs", ("batch", "chunk", "head", "csize_m", "csize_n")))
    + f"BLOCK_SIZE_M=32, BLOCK_SIZE_N=32, BLOCK_SIZE_K={BLOCK_K}, num_warps=4, num_stages=3",
    dict(x_ptr=("randn", "bfloat16", NX), dout_ptr=("randn", "bfloat16", B * S * H * P), dt_ptr=DT_SPEC,
         dA_cumsum_ptr=DA_SPEC, cb_ptr=("randn", "float32", B * NC * G * L * L),
         ddA_cumsum_ptr=("zeros", "float32", B * H * NC * MB * L), **ints),
    # fp32 products, cumsums and sums in another order, exp to an ulp or so.
    (cdiv(L, 32), B * NC, H), ["ddA_cumsum_ptr"],
    bytes=2 * 2 * B * S * H * P + 2 * 4 * NBHS + 4 * B * NC * G * L * L + 4 * B * H * NC * MB * L,
    tol=1e-4, flops=B * NC * H * L * L * P, package=PKG))

# dx (and ddt, dD) of the chunk scan and chunk state together: B @ dstates
# (the whole state, 128, in one dot) scaled by exp(dA_last - dA_m), plus the
# causal (CB^T decayed, rounded to bf16) @ dout over the chunk, times dt, plus
# D dout; ddt = rowsum(acc * x) and dD = sum(dout * x) by atomic_add (one
# program per address). CB is read transposed (the host passes its strides
# swapped). dD [256 / 32 row blocks, batch, chunks, heads, 1]. 128 x 64 x 32,
# 4 stages, 4 warps: 2 x 32 x 80 programs. FLOPs: B @ dstates and the causal
# half of the L x L x P product.
MT = cdiv(L, 32)  # dD's row blocks: cdiv(chunk_size, BLOCK_SIZE_min 32)
DD = strides(MT, B, NC, H, 1)
ints = dict(chunk_size=L, hdim=P, dstate=NS, batch=B, seqlen=S, nheads_ngroups_ratio=H // G)
ints.update(named("x", BSHD, SLICE_X))
ints.update(named("cb", ("batch", "chunk", "head", "csize_m", "csize_k"), (CB[0], CB[1], CB[2], CB[4], CB[3])))
ints.update(named("dout", BSHD, DOUT))
ints.update(named("dt", DT4, CHUNKED))
ints.update(named("dA_cs", DT4, CHUNKED))
ints.update(named("seq_idx", SEQ, (0, 0)))
ints["stride_D_head"] = 1
ints.update(named("b", ("batch", "seqlen", "head", "dstate"), SLICE_BC))
ints.update(named("dstates", ("batch", "chunk", "head", "hdim", "dstate"), STATES))
ints.update(named("dx", BSHD, SLICE_X))
ints.update(named("ddt", DT4 + ("tile",), CHUNKED + (0,)))
ints.update(named("dD", ("batch", "chunk", "head", "csize", "hdim"), (DD[1], DD[2], DD[3], DD[0], DD[4])))
CASES.append(case(
    "mamba2_chunk_scan_chunk_state_bwd_dx_bf16", MAMBA + "ssd_combined.py", "_chunk_scan_chunk_state_bwd_dx_kernel",
    "x_ptr=*bf16, cb_ptr=*fp32, dout_ptr=*bf16, dt_ptr=*fp32, dA_cumsum_ptr=*fp32, seq_idx_ptr=None, "
    "D_ptr=*fp32, b_ptr=*bf16, dstates_ptr=*bf16, dx_ptr=*bf16, ddt_ptr=*fp32, dD_ptr=*fp32, "
    "chunk_size=i32, hdim=i32, dstate=i32, batch=i32, seqlen=i32, nheads_ngroups_ratio=i32, "
    + sig_strides(("x", BSHD), ("cb", ("batch", "chunk", "head", "csize_m", "csize_k")), ("dout", BSHD),
                  ("dt", DT4), ("dA_cs", DT4), ("seq_idx", SEQ))
    + "stride_D_head=i32, "
    + sig_strides(("b", ("batch", "seqlen", "head", "dstate")),
                  ("dstates", ("batch", "chunk", "head", "hdim", "dstate")), ("dx", BSHD),
                  ("ddt", DT4 + ("tile",)), ("dD", ("batch", "chunk", "head", "csize", "hdim")))
    + "HAS_D=True, D_HAS_HDIM=False, HAS_SEQ_IDX=False, BLOCK_SIZE_M=128, BLOCK_SIZE_N=64, BLOCK_SIZE_K=32, "
    f"BLOCK_SIZE_DSTATE={NS}, IS_TRITON_22=True, DETERMINISTIC_REDUCTION=False, num_warps=4, num_stages=4",
    dict(x_ptr=("randn", "bfloat16", NX), cb_ptr=("randn", "float32", B * NC * G * L * L),
         dout_ptr=("randn", "bfloat16", B * S * H * P), dt_ptr=DT_SPEC, dA_cumsum_ptr=DA_SPEC,
         D_ptr=("uniform", "float32", H, 0.5, 1.5), b_ptr=("randn", "bfloat16", NBC),
         dstates_ptr=("randn", "bfloat16", NSTATES), dx_ptr=("zeros", "bfloat16", NX),
         ddt_ptr=("zeros", "float32", NBHS), dD_ptr=("zeros", "float32", MT * B * NC * H), **ints),
    # The decayed CB is rounded to bf16 before its dot (an ulp of exp can
    # move a product by a bf16 rounding, 2^-8), dx is bf16; ddt inherits
    # the former, dD is fp32 sums in another order.
    (cdiv(L, 128) * cdiv(P, 64), B * NC, H), ["dx_ptr", "ddt_ptr", "dD_ptr"],
    bytes=2 * 3 * B * S * H * P + 4 * B * NC * G * L * L + 2 * B * S * G * NS + 2 * NSTATES + 4 * 3 * NBHS
    + 4 * H + 4 * MT * B * NC * H,
    tol=2e-2, flops=B * NC * H * (2 * L * P * NS + L * L * P), reset=["ddt_ptr", "dD_ptr"], package=PKG))
