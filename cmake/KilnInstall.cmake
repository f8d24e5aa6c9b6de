# `cmake --install` for Kiln: the tools, the runtime and the build rules, as
# a CMake package that consumers load with find_package(Kiln):
#
#   bin/kilnc, bin/kiln-codegen           the compiler and the launcher generator
#   lib/libkiln_runtime.a, include/kiln/  the runtime (+ kiln_tuning_table,
#                                         kiln_tune_main: the tuners' main,
#                                         kiln_testing: device buffers and
#                                         timers for tests and benchmarks)
#   share/kiln/codegen_templates/         kiln-codegen's templates
#   lib/cmake/Kiln/                       KilnConfig.cmake (+ version, targets)
#                                         and triton_kernel.cmake
#
# The package defines Kiln::kilnc, Kiln::kiln-codegen, Kiln::kiln_runtime,
# Kiln::kiln_testing
# and the triton_kernel() function, set up to use them
# (tests/e2e/consumer is a consumer).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(KILN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/Kiln")
set(KILN_INSTALL_TEMPLATESDIR "${CMAKE_INSTALL_DATADIR}/kiln/codegen_templates")

install(TARGETS kiln_runtime kiln_tuning_table kiln_testing kiln_tune_main kiln-codegen
        EXPORT KilnTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
# kilnc may be built here or imported (KILN_KILNC): installed as a program
# either way, and defined by KilnConfig.cmake.
if(TARGET kilnc)
  install(PROGRAMS "$<TARGET_FILE:kilnc>" DESTINATION "${CMAKE_INSTALL_BINDIR}"
          RENAME kilnc)
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/kiln"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/testing/kiln"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tools/kiln_tune/kiln"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/codegen_templates/"
        DESTINATION "${KILN_INSTALL_TEMPLATESDIR}"
        FILES_MATCHING PATTERN "*.tmpl")
install(EXPORT KilnTargets NAMESPACE Kiln:: DESTINATION "${KILN_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/KilnConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/KilnConfig.cmake"
  INSTALL_DESTINATION "${KILN_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR KILN_INSTALL_TEMPLATESDIR)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/KilnConfig.cmake"
              "${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake"
              "${PROJECT_SOURCE_DIR}/rules/triton_kernel.cmake"
        DESTINATION "${KILN_INSTALL_CMAKEDIR}")
