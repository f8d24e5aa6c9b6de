# tl.gather from a table too large for a one-hot comparison (index elements
# times the axis's length past 8192) is a kiln.gather: src and index keep
# their layouts, the result takes the index's; lowered through shared memory,
# src stored once, one barrier, each result element loaded at its index
# (out of range: element 0 loaded and 0 kept). A 64 x 64 gather compiled in
# 54 s as a one-hot comparison; now in a fraction of a second.
#
# RUN: %kilnc compile %S/../kernels/language/gather_tables.py -n gather_tile -s "src_ptr=*fp32:16, idx_ptr=*u8:16, out_ptr=*fp32:16, BM=64, BN=64, BI=64, AXIS=1" --arch sm_90a --emit gpu -o - | FileCheck %s --check-prefix=GPU
# GPU: %[[IDX:.*]] = arith.extui {{.*}} : tensor<64x64xi8, [[IL:#kiln_gpu.blocked<[^>]*>]]> to tensor<64x64xi32, [[IL]]>
# GPU: kiln.gather %{{.*}}[%[[IDX]]] {axis = 1 : i32} : tensor<64x64xf32, {{.*}}>, tensor<64x64xi32, [[IL]]> -> tensor<64x64xf32, [[IL]]>
# The tile holds one 16-byte fp32 store a thread (4 floats, the stored
# type's; the u8 indices are loaded 4 a thread): the result is stored as
# it is, no conversion.
# GPU-NOT: convert_layout
# GPU: kiln.store {{.*}} : tensor<64x64x!kiln.ptr<f32>, [[IL]]>
# RUN: %kilnc compile %S/../kernels/language/gather_tables.py -n gather_tile -s "src_ptr=*fp32:16, idx_ptr=*u8:16, out_ptr=*fp32:16, BM=64, BN=64, BI=64, AXIS=1" --arch sm_90a --emit ptx -o - | FileCheck %s --check-prefix=PTX
# PTX: .extern .shared .align {{[0-9]+}} .b8 kiln_smem[];
# PTX-COUNT-8: st.shared.v4.b32
# PTX: bar.sync 0;
# PTX: setp.lt.u{{16|32}} %p{{[0-9]+}}, %{{r|rs}}{{[0-9]+}}, 64;
# PTX: ld.shared.b32
# PTX: selp.b32
# RUN: %kilnc compile %S/../kernels/language/gather_tables.py -n permute_vector -s "src_ptr=*bf16, perm_ptr=*i32, out_ptr=*bf16, N=1024" --arch sm_80 --emit ptx -o - | FileCheck %s --check-prefix=SM80
# SM80-COUNT-8: st.shared.b16
# SM80: bar.sync 0;
# SM80-COUNT-8: ld.shared.b16
