//===- BlockedLayouts.h - named constructors of linear layouts --*- C++ -*-===//
//
// The layouts of the kiln_gpu encodings, as LinearLayouts. Distributed
// layouts (blocked, slice, MMA accumulator, MMA operand) map the input
// dimensions "register", "lane", "warp" and "block", in that order, to the
// tensor dimensions "dim0", "dim1", ..., in that order; shared-memory layouts
// map "offset" (in elements) to the tensor dimensions. All sizes are powers
// of two. Invalid parameters are programming errors (the kiln_gpu verifier
// rejects them first) and abort through llvm::report_fatal_error.
//
// Every distributed layout here is built the same way: a layout of one *CTA
// tile* (what all threads cover once), then tileOverShape fits it to the
// tensor: along a dimension where the tensor is larger the tile repeats,
// each repetition in more registers of the same threads; along one where it
// is smaller, coordinates wrap around (modulo the tensor size), so several
// registers, lanes or warps hold copies of one element (broadcast).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAYOUT_BLOCKEDLAYOUTS_H
#define KILN_LAYOUT_BLOCKEDLAYOUTS_H

#include "compiler/layout/LinearLayout.h"

namespace kiln::layout {

/// Fits the layout of one CTA tile to a tensor of `shape`.
///
/// `tile` maps hardware dimensions to some of "dim0" .. "dim<rank-1>" (a
/// missing one has extent 1). For each dimension d, in `repOrder` (a
/// permutation of the dimensions, the one whose repetitions take the lowest
/// register bits first), where shape[d] is larger than the tile's extent the
/// result gets shape[d] / extent more register bits, repetition j of the tile
/// being j * extent further along d. Then where shape[d] is smaller than the
/// extent, coordinates along d are taken modulo shape[d]. The result has
/// input dimensions register, lane, warp, block (size 1 where the tile lacks
/// one) and output dimensions dim0, dim1, ... of sizes `shape`.
LinearLayout tileOverShape(const LinearLayout &tile,
                           llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<unsigned> repOrder);

/// The layout of the kiln_gpu.blocked encoding (KilnGPUDialect.td) on a
/// tensor of `shape`; all arrays have one entry per tensor dimension.
///
/// Along each dimension d a thread owns chunks of sizePerThread[d]
/// contiguous elements. The chunks of one CTA tile go to the
/// threadsPerWarp[d] lanes and then the warpsPerCTA[d] warps along each
/// dimension, lane and warp ids being split across dimensions in `order`
/// (fastest-varying dimension first: lane id = l0 + tpw[order[0]] * (l1 +
/// ...)). The tile, sizePerThread * threadsPerWarp * warpsPerCTA elements
/// along each dimension, repeats over larger tensors and wraps around
/// smaller ones (see tileOverShape). A thread's registers list first the
/// elements of one chunk (dimensions in `order`), then the tile repetitions
/// (dimensions in `order`). So element (c0, c1, ...) of chunk position e,
/// lane l, warp w, repetition t is, along each dimension d,
///
///     c_d = (t_d * tile_d + w_d * tpw_d * spt_d + l_d * spt_d + e_d)
///           mod shape_d.
LinearLayout blocked(llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<unsigned> sizePerThread,
                     llvm::ArrayRef<unsigned> threadsPerWarp,
                     llvm::ArrayRef<unsigned> warpsPerCTA,
                     llvm::ArrayRef<unsigned> order);

/// The layout of the result of reducing a tensor of layout `parent` along
/// tensor dimension `dim` (upstream Triton's slice layout): the same threads
/// hold, for each position along the other dimensions, the value reduced
/// over `dim`. Output dimension dim<dim> is dropped and the later ones are
/// renumbered (dim<k+1> becomes dim<k>). Hardware bits that only moved along
/// `dim` now map to zero: lanes and warps that differed only along `dim`
/// hold the same reduced value (broadcast), and register bits that differed
/// only along `dim` are removed, since a thread keeps one reduced value for
/// all of them (register bits that were already zero in the parent stay).
LinearLayout slice(const LinearLayout &parent, unsigned dim);

/// The accumulator (C/D) layout of NVIDIA's mma.sync m16n8 instructions
/// (MMA v2, sm_80 and later) on a 2-D tensor of `shape` (M x N), with
/// warpsPerCTA[0] x warpsPerCTA[1] warps (along M, along N).
///
/// In one warp's 16x8 tile, as in the PTX ISA's fragment figures: lane l
/// holds row l/4 in registers 0-1 and row l/4 + 8 in registers 2-3, columns
/// 2*(l%4) and 2*(l%4)+1. Warp w handles tile (w / warpsPerCTA[1],
/// w % warpsPerCTA[1]) (row-major warp order: the warp id's low bits go
/// along N). Over larger tensors the warps' 16*warpsPerCTA[0] x
/// 8*warpsPerCTA[1] tile repeats in registers, along N first, then M.
///
/// A 3-D shape (B x M x N, a batched dot) takes three warpsPerCTA (along
/// B, M, N): each batch is the 2-D layout above, the warps' batches
/// repeat in registers after M.
LinearLayout mmaV2(llvm::ArrayRef<int64_t> shape,
                   llvm::ArrayRef<unsigned> warpsPerCTA);

/// The wgmma accumulator layout with warpgroups along N as well as M, on a
/// 2-D tensor of `shape` (M x N): warpsPerCTA[0] warps along M (a multiple
/// of 4: each warpgroup's four warps take 16 rows each of an m64 tile, the
/// warp id's low bits), then warpsPerCTA[1] warpgroups along N, each
/// `columns` wide (its instruction's N). A warp holds the mma.sync 16x8
/// fragment repeated along N over its warpgroup's columns (register bits
/// after the first two), then over the rows of further m64 tiles. With one
/// warpgroup along N it is mmaV2(shape, {warpsPerCTA[0], 1}).
LinearLayout wgmmaSplitN(llvm::ArrayRef<int64_t> shape,
                         llvm::ArrayRef<unsigned> warpsPerCTA,
                         unsigned columns);

/// The layout of operand A (opIdx 0, M x K) or B (opIdx 1, K x N) of the
/// mma.sync m16n8k(8*kWidth) instruction whose accumulator is
/// mmaV2(_, warpsPerCTA), on a 2-D tensor of `shape`. `kWidth` is the number
/// of consecutive K elements a thread holds in one 32-bit register: 2 for
/// f16/bf16 (m16n8k16), 4 for 8-bit types (m16n8k32), 1 for tf32 (m16n8k8).
///
/// One warp's operand tile, after the PTX ISA: for A (16 x 8*kWidth), lane l
/// holds rows l/4 and l/4 + 8 and, in each, columns kWidth*(l%4) + [0,
/// kWidth) and the same plus 4*kWidth; its registers list, fastest first:
/// the kWidth consecutive columns, the row (+8), the column half (+4*kWidth).
/// For B (8*kWidth x 8), lane l holds column l/4, rows kWidth*(l%4) + [0,
/// kWidth) and the same plus 4*kWidth. Warps split as in mmaV2: operand A is
/// the same in all warps of one warp row (broadcast along N), operand B in
/// all warps of one warp column (broadcast along M). Over larger tensors the
/// tile repeats in registers, along K first.
LinearLayout dotOperandMmaV2(llvm::ArrayRef<int64_t> shape, unsigned opIdx,
                             llvm::ArrayRef<unsigned> warpsPerCTA,
                             unsigned kWidth);

/// Whether a 2-D tensor laid out as `a` (M x K, 16-bit elements) holds, in
/// every thread, the A fragments of the tensor-core instructions whose
/// accumulator (M x N) is laid out as `acc` (mma.sync's, or wgmma's with its
/// warpgroups along M and N): its lanes as the accumulator's (rows l/4 and
/// l/4 + 8, columns 2 (l % 4) + {0, 1} and 8 further), each warp on the rows
/// of the accumulator's warp, whatever columns that warp takes of the
/// accumulator (every warpgroup along N reads the same rows of a), and the
/// registers of a thread holding, for each row its accumulator registers
/// hold, all of K in that pattern. Attention's p, computed in the layout of
/// the scores' accumulator, is then read from registers by p @ v.
bool holdsAFragments(const LinearLayout &a, const LinearLayout &acc);

/// A swizzled shared-memory layout (upstream Triton's swizzled_shared
/// parameters): input "offset" in elements, outputs the tensor dimensions.
///
/// The tensor is stored row-major along `order` (order[0] the contiguous
/// dimension, of `cols` elements; order[1] the rows), except that within row
/// r the columns are permuted: column c is stored at position
///
///     c ^ ((((r / perPhase) % maxPhase) * vec) % cols)
///
/// so that vec-element groups of consecutive rows fall in different banks.
/// Further dimensions (order[2], ...) stack whole 2-D slices unswizzled.
/// vec, perPhase and maxPhase are powers of two; vec = perPhase = maxPhase =
/// 1 is no swizzling.
LinearLayout swizzledShared(llvm::ArrayRef<int64_t> shape, unsigned vec,
                            unsigned perPhase, unsigned maxPhase,
                            llvm::ArrayRef<unsigned> order);

/// The NVMMA shared-memory layout that wgmma operands and TMA use on a 2-D
/// tensor, for a buffer aligned to 1024 bytes: input "offset" in elements.
///
/// The contiguous dimension (order[0]) is cut into column blocks of
/// swizzleBytes bytes; blocks are stored one after the other, each as
/// rows of swizzleBytes bytes. Within each 1024-byte-aligned region the
/// hardware's swizzle XORs the 16-byte chunk index (address bits 4-6) with
/// address bits 7-9, as many bits as swizzleBytes / 16 has: byte address a
/// holds what the unswizzled layout puts at a ^ (((a >> 7) & (swizzleBytes /
/// 16 - 1)) << 4). swizzleBytes is 0 (no swizzle: plain row-major), 32, 64
/// or 128; elementBitWidth is 8, 16, 32 or 64; the contiguous dimension must
/// hold at least swizzleBytes. With one column block (cols * elementBytes ==
/// swizzleBytes) this equals swizzledShared with vec = 16 / elementBytes,
/// perPhase = 128 / swizzleBytes and maxPhase = swizzleBytes / 16.
LinearLayout nvmmaShared(llvm::ArrayRef<int64_t> shape, unsigned swizzleBytes,
                         unsigned elementBitWidth,
                         llvm::ArrayRef<unsigned> order);

} // namespace kiln::layout

#endif // KILN_LAYOUT_BLOCKEDLAYOUTS_H
