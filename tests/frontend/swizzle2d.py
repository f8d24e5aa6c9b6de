# tl.swizzle2d(i, j, size_i, size_j, size_g): upstream's grouped renumbering
# of a size_i x size_j grid (column-major within groups of size_g rows, the
# last group shorter), on program ids and on blocks of indices. On a 4 x 4
# grid with groups of 2, (0, 1) -> (0, 2), (1, 0) -> (0, 1), (2, 1) ->
# (3, 0): the example of upstream's docstring.
# RUN: %kilnc compile %s -n program_ids -s "*i32, i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=PIDS
# RUN: %kilnc compile %s -n blocks -s "*i32" --arch sm_90a --emit kiln -o - | FileCheck %s --check-prefix=BLOCKS
import triton
import triton.language as tl


# ij = i * size_j + j; the group of size_g * size_j elements; its first row;
# the group's rows, min(size_i - first, size_g); then column-major inside.
# PIDS-LABEL: func.func @program_ids
# PIDS: %[[I:.*]] = kiln.program_id 0
# PIDS: %[[J:.*]] = kiln.program_id 1
# PIDS: %[[NI:.*]] = kiln.num_programs 0
# PIDS: %[[NJ:.*]] = kiln.num_programs 1
# PIDS: %[[IJ0:.*]] = arith.muli %[[I]], %[[NJ]] : i32
# PIDS: %[[IJ:.*]] = arith.addi %[[IJ0]], %[[J]] : i32
# PIDS: %[[GJ:.*]] = arith.muli %arg1, %[[NJ]] : i32
# PIDS: arith.divsi %[[IJ]], %[[GJ]] : i32
# PIDS: %[[FIRST:.*]] = arith.muli %{{.*}}, %arg1 : i32
# PIDS: %[[LEFT:.*]] = arith.subi %[[NI]], %[[FIRST]] : i32
# PIDS: %[[ROWS:.*]] = arith.minsi %[[LEFT]], %arg1 : i32
# PIDS: %[[IN:.*]] = arith.remsi %[[IJ]], %[[GJ]] : i32
# PIDS: arith.remsi %[[IN]], %[[ROWS]] : i32
# PIDS: %[[NEWI:.*]] = arith.addi %[[FIRST]], %{{.*}} : i32
# PIDS: arith.divsi %[[IN]], %[[ROWS]] : i32
@triton.jit
def program_ids(out_ptr, group):
    i, j = tl.program_id(0), tl.program_id(1)
    ni, nj = tl.num_programs(0), tl.num_programs(1)
    new_i, new_j = tl.swizzle2d(i, j, ni, nj, group)
    tl.store(out_ptr + new_i * nj + new_j, i * nj + j)


# Blocks of indices broadcast as arithmetic does; compile-time sizes fold
# (size_g * size_j = 8) and become constants.
# BLOCKS-LABEL: func.func @blocks
# BLOCKS-DAG: %[[FOUR:.*]] = arith.constant dense<4> : tensor<4x4xi32>
# BLOCKS-DAG: %[[TWO:.*]] = arith.constant dense<2> : tensor<4x4xi32>
# BLOCKS-DAG: %[[EIGHT:.*]] = arith.constant dense<8> : tensor<4x4xi32>
# BLOCKS: %[[IJ:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<4x4xi32>
# BLOCKS: %[[G:.*]] = arith.divsi %[[IJ]], %[[EIGHT]] : tensor<4x4xi32>
# BLOCKS: %[[FIRST:.*]] = arith.muli %[[G]], %[[TWO]] : tensor<4x4xi32>
# BLOCKS: %[[LEFT:.*]] = arith.subi %[[FOUR]], %[[FIRST]] : tensor<4x4xi32>
# BLOCKS: %[[ROWS:.*]] = arith.minsi %[[LEFT]], %[[TWO]] : tensor<4x4xi32>
# BLOCKS: %[[IN:.*]] = arith.remsi %[[IJ]], %[[EIGHT]] : tensor<4x4xi32>
# BLOCKS: arith.remsi %[[IN]], %[[ROWS]] : tensor<4x4xi32>
# BLOCKS: arith.divsi %[[IN]], %[[ROWS]] : tensor<4x4xi32>
@triton.jit
def blocks(out_ptr):
    i = tl.arange(0, 4)[:, None]
    j = tl.arange(0, 4)[None, :]
    new_i, new_j = tl.swizzle2d(i, j, 4, 4, 2)
    tl.store(out_ptr + i * 4 + j, new_i * 4 + new_j)
