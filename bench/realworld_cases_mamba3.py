"""Real-world cases: Mamba-3's Triton kernels (state-spaces/mamba,
tests/realworld/mamba). bench/realworld_cases.py says what a case is.

The SISO backward's dQ/dK/dV kernel (`mamba3_siso_bwd.py`,
`mamba3_siso_bwd_kernel_dqkv`): one program per head and sequence walks the
chunks in reverse, carrying the state gradient. Autotuned over num_stages,
num_warps and maxnreg: the case takes 2 stages, 4 warps, no register cap,
one config of its list. 2 sequences of 4096 tokens, 32 heads, head dims 128
(q, k) and 64 (v), chunks of 64; q, k, v, dO and the forward's chunk states
in bf16 as the forward stores them, decays and dot products in fp32, no
input state, no output-state gradient.
"""

from realworld_case_rules import TRL, case, decay_cumsum, strides

CASES = []

FILE = TRL + "mamba/mamba_ssm/ops/triton/mamba3/mamba3_siso_bwd.py"
B, S, H, DQK, DV, L = 2, 4096, 32, 128, 64, 64
NC = S // L


def named(prefix, names, shape):
    return dict(zip((f"stride_{prefix}_{n}" for n in names), strides(*shape)))


ints = {}
ints.update(named("q", ("batch", "seqlen", "head", "qkdim"), (B, S, H, DQK)))
ints.update(named("k", ("batch", "seqlen", "head", "qkdim"), (B, S, H, DQK)))
ints.update(named("v", ("batch", "seqlen", "head", "vdim"), (B, S, H, DV)))
ints.update(named("da_cs", ("batch", "head", "seqlen"), (B, H, S)))
ints.update(named("da_cs_sum", ("batch", "head", "seqlen"), (B, H, NC)))
ints.update(named("qk_dot", ("batch", "head", "seqlen"), (B, H, S)))
ints["stride_d_head"] = 1
ints.update(named("ssm_states", ("batch", "head", "vdim", "qkdim"), (B, H, DV, NC * DQK)))
ints.update(named("do", ("batch", "seqlen", "head", "vdim"), (B, S, H, DV)))
ints.update({f"stride_d_ossm_state_{n}": 0 for n in ("batch", "head", "vdim", "qkdim")})
ints["stride_cu_seqlen"] = 0
ints.update(named("dq", ("batch", "seqlen", "head", "qkdim"), (B, S, H, DQK)))
ints.update(named("dk", ("batch", "seqlen", "head", "qkdim"), (B, S, H, DQK)))
ints.update(named("dv", ("batch", "seqlen", "head", "vdim"), (B, S, H, DV)))
ints.update(named("dadt", ("batch", "head", "seqlen"), (B, H, S)))
ints.update(named("dQK_dot", ("batch", "head", "seqlen"), (B, H, S)))
ints.update(named("dd", ("batch", "head"), (B, H)))
ints.update({f"stride_d_issm_state_{n}": 0 for n in ("batch", "head", "vdim", "qkdim")})
ints.update(seqlen=S, nheads_qk=H, headdim_qk=DQK, headdim_v=DV)

QK, VO = B * S * H * DQK, B * S * H * DV
CASES.append(case(
    "mamba3_siso_bwd_dqkv_bf16", FILE, "mamba3_siso_bwd_kernel_dqkv",
    "Q=*bf16, K=*bf16, V=*bf16, DA_CS=*fp32, DA_CS_SUM=*fp32, QK_Dot=*fp32, D=*fp32, "
    "SSM_States=*bf16, dO=*bf16, d_OSSM_State=*fp32, Cu_Seqlens=None, dQ=*bf16, dK=*bf16, "
    "dV=*bf16, dADT=*fp32, dQK_Dot=*fp32, dD=*fp32, d_ISSM_State=*fp32, stride_q_batch=i32, "
    "stride_q_seqlen=i32, stride_q_head=i32, stride_q_qkdim=i32, stride_k_batch=i32, "
    "stride_k_seqlen=i32, stride_k_head=i32, stride_k_qkdim=i32, stride_v_batch=i32, "
    "stride_v_seqlen=i32, stride_v_head=i32, stride_v_vdim=i32, stride_da_cs_batch=i32, "
    "stride_da_cs_head=i32, stride_da_cs_seqlen=i32, stride_da_cs_sum_batch=i32, "
    "stride_da_cs_sum_head=i32, stride_da_cs_sum_seqlen=i32, stride_qk_dot_batch=i32, "
    "stride_qk_dot_head=i32, stride_qk_dot_seqlen=i32, stride_d_head=i32, "
    "stride_ssm_states_batch=i32, stride_ssm_states_head=i32, stride_ssm_states_vdim=i32, "
    "stride_ssm_states_qkdim=i32, stride_do_batch=i32, stride_do_seqlen=i32, stride_do_head=i32, "
    "stride_do_vdim=i32, stride_d_ossm_state_batch=i32, stride_d_ossm_state_head=i32, "
    "stride_d_ossm_state_vdim=i32, stride_d_ossm_state_qkdim=i32, stride_cu_seqlen=i32, "
    "stride_dq_batch=i32, stride_dq_seqlen=i32, stride_dq_head=i32, stride_dq_qkdim=i32, "
    "stride_dk_batch=i32, stride_dk_seqlen=i32, stride_dk_head=i32, stride_dk_qkdim=i32, "
    "stride_dv_batch=i32, stride_dv_seqlen=i32, stride_dv_head=i32, stride_dv_vdim=i32, "
    "stride_dadt_batch=i32, stride_dadt_head=i32, stride_dadt_seqlen=i32, "
    "stride_dQK_dot_batch=i32, stride_dQK_dot_head=i32, stride_dQK_dot_seqlen=i32, "
    "stride_dd_batch=i32, stride_dd_head=i32, stride_d_issm_state_batch=i32, "
    "stride_d_issm_state_head=i32, stride_d_issm_state_vdim=i32, stride_d_issm_state_qkdim=i32, "
    "seqlen=i32, nheads_qk=i32, headdim_qk=i32, headdim_v=i32, CHUNK_SIZE=64, HEADDIM_QK=128, "
    "HEADDIM_V=64, RECOMPUTE_MASK=False, HAS_D_OSSM_STATE=False, RETURN_D_ISSM_STATE=False, "
    "IS_VARLEN=False, "
    "num_warps=4, num_stages=2",
    dict(Q=("randn", "bfloat16", QK, 0.1), K=("randn", "bfloat16", QK, 0.1),
         V=("randn", "bfloat16", VO), DA_CS=decay_cumsum(B * H * NC, L, 0.02),
         DA_CS_SUM=("uniform", "float32", B * H * NC, -1.0, 0.0),
         QK_Dot=("randn", "float32", B * H * S), D=("randn", "float32", H),
         SSM_States=("randn", "bfloat16", B * H * DV * NC * DQK, 0.1),
         dO=("randn", "bfloat16", VO), d_OSSM_State=("zeros", "float32", 1),
         dQ=("zeros", "bfloat16", QK), dK=("zeros", "bfloat16", QK), dV=("zeros", "bfloat16", VO),
         dADT=("zeros", "float32", B * H * S), dQK_Dot=("zeros", "float32", B * H * S),
         dD=("zeros", "float32", B * H), d_ISSM_State=("zeros", "float32", 1), **ints),
    (H, B), ["dQ", "dK", "dV", "dADT", "dQK_Dot", "dD"],
    bytes=2 * (3 * QK + 3 * VO + B * H * DV * NC * DQK) + 4 * 6 * B * H * S, tol=2e-2,
    package=TRL + "mamba"))
