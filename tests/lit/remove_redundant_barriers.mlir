// RUN: %kiln-opt --split-input-file --kiln-remove-redundant-barriers %s | FileCheck %s
// Barriers that order no shared-memory access go; the others stay.

// The first barrier has no access before it; the second orders the store
// before the load.
// CHECK-LABEL: llvm.func @leading
// CHECK-NEXT: llvm.store
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.load
llvm.func @leading(%p: !llvm.ptr<3>, %v: f32) {
  nvvm.barrier0
  llvm.store %v, %p : f32, !llvm.ptr<3>
  nvvm.barrier0
  %x = llvm.load %p : !llvm.ptr<3> -> f32
  llvm.return
}

// -----

// Back to back (one op's closing barrier, the next one's opening): the
// second orders nothing. Global memory is no shared access.
// CHECK-LABEL: llvm.func @back_to_back
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.load %{{.*}} : !llvm.ptr<1>
// CHECK-NEXT: llvm.store
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
llvm.func @back_to_back(%p: !llvm.ptr<3>, %g: !llvm.ptr<1>, %v: f32) {
  %x = llvm.load %p : !llvm.ptr<3> -> f32
  nvvm.barrier0
  %y = llvm.load %g : !llvm.ptr<1> -> f32
  nvvm.barrier0
  llvm.store %v, %p : f32, !llvm.ptr<3>
  llvm.return
}

// -----

// A loop: the barrier at its head follows the previous iteration's shared
// load along the back edge, so it stays; the one after the loop has no
// access after it before the kernel ends, so it goes.
// CHECK-LABEL: llvm.func @loop
// CHECK: ^bb1:
// CHECK-NEXT: nvvm.barrier0
// CHECK: ^bb2:
// CHECK-NEXT: llvm.return
llvm.func @loop(%p: !llvm.ptr<3>, %c: i1) {
  llvm.br ^bb1
^bb1:
  nvvm.barrier0
  %x = llvm.load %p : !llvm.ptr<3> -> f32
  llvm.cond_br %c, ^bb1, ^bb2
^bb2:
  nvvm.barrier0
  llvm.return
}

// -----

// Two barriers with nothing between them: one goes, never both.
// CHECK-LABEL: llvm.func @pair
// CHECK: llvm.store
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.load
llvm.func @pair(%p: !llvm.ptr<3>, %v: f32) {
  llvm.store %v, %p : f32, !llvm.ptr<3>
  nvvm.barrier0
  nvvm.barrier0
  %x = llvm.load %p : !llvm.ptr<3> -> f32
  llvm.return
}

// -----

// tl.debug_barrier() stays, and loses its marker; shared-memory inline PTX
// (here ldmatrix) counts as an access, other inline PTX (cvt) does not: the
// barrier between them, followed by no access, goes, and so does the last.
// CHECK-LABEL: llvm.func @user_and_asm
// CHECK-NEXT: nvvm.barrier0{{$}}
// CHECK-NEXT: llvm.inline_asm {{.*}}"ldmatrix
// CHECK-NEXT: llvm.inline_asm {{.*}}"cvt.rn
// CHECK-NEXT: llvm.return
llvm.func @user_and_asm(%a: i32, %f: f32) {
  nvvm.barrier0 {kiln_user_barrier}
  %0 = llvm.inline_asm has_side_effects "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {$0}, [$1];", "=r,r" %a : (i32) -> i32
  nvvm.barrier0
  %1 = llvm.inline_asm "cvt.rn.f16.f32 $0, $1;", "=h,f" %f : (f32) -> i16
  nvvm.barrier0
  llvm.return
}

// -----

// A dot's closing barrier, then the next dot's opening proxy fence and
// barrier: the fence orders only its own thread's writes, so the first
// barrier goes and the fence stays before the second. A fence followed by
// the async read itself keeps the barrier before it.
// CHECK-LABEL: llvm.func @proxy_fence_between
// CHECK: "wgmma.wait_group
// CHECK-NEXT: llvm.inline_asm {{.*}}"fence.proxy.async
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.inline_asm {{.*}}"wgmma.fence
// CHECK-NEXT: llvm.store
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: llvm.inline_asm {{.*}}"fence.proxy.async
// CHECK-NEXT: llvm.inline_asm {{.*}}"wgmma.fence
// CHECK-NEXT: llvm.return
llvm.func @proxy_fence_between(%p: !llvm.ptr<3>, %v: f32) {
  llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "" : () -> ()
  nvvm.barrier0
  llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;", "" : () -> ()
  nvvm.barrier0
  llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "" : () -> ()
  llvm.store %v, %p : f32, !llvm.ptr<3>
  nvvm.barrier0
  llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;", "" : () -> ()
  llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "" : () -> ()
  llvm.return
}
