# The targets of the two subproject consumers (subdirectory/, fetchcontent/),
# included by each after it has brought Kiln in: the installed-package
# consumer's kernel and main(), linked against the runtime by name.
triton_kernel(
  NAME scale
  SRCS ../scale.py
  KERNEL scale_kernel
  NAMESPACE consumer
  ARCHS sm_80 sm_90a
  SPECIALIZATIONS
    "x_ptr=*fp32, out_ptr=*fp32, n=i32, alpha=fp32, BLOCK=1024"
    "x_ptr=*fp32, out_ptr=*fp32, n=i32, alpha=fp32, BLOCK=256, num_warps=2"
    "*fp16, *fp16, i32, fp32, 2048")

add_executable(consumer ../main.cc)
target_link_libraries(consumer PRIVATE scale Kiln::kiln_runtime Kiln::kiln_testing)
