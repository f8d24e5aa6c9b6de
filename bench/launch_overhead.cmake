# bench/launch_overhead: host cost per launch, generated launcher vs raw
# cuLaunchKernel (launch_overhead.cc); scripts/run_all_gpu.sh runs it on the
# GPU machine. Needs examples/vector_add's add library, hence kilnc.
if(TARGET add)
  add_executable(launch_overhead "${CMAKE_CURRENT_LIST_DIR}/launch_overhead.cc")
  target_link_libraries(launch_overhead PRIVATE add kiln_runtime kiln_testing)
  target_include_directories(launch_overhead SYSTEM PRIVATE "${CUDA_HOME}/include")
endif()
