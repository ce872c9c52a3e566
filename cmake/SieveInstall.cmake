# `cmake --install BUILD --prefix P` puts Sieve where another CMake project finds it:
#
#   P/include/sieve/*.h                   the public API (include/sieve/)
#   P/lib/libsieve*.a                     the engine's libraries (one per source folder)
#   P/lib/librmm.so, librapids_logger.so  with the CUDA backend only: RAFT's runtime libraries
#   P/lib/cmake/sieve/sieveConfig.cmake   find_package(sieve) → the target sieve::sieve
#   P/lib/cmake/sieve/sieveConfigVersion.cmake, sieveTargets*.cmake
#
# sieve::sieve carries P/include and every library it needs: RocksDB, CRoaring, ICU, Snowball's
# libstemmer, OpenBLAS, xxHash, threads and, in a build with the CUDA backend, the CUDA runtime, cuBLAS and cuSPARSE
# (found again by sieveConfig.cmake through find_dependency). tools/check-install.sh proves it
# by building tools/example against the installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_sieve_libs sieve sieve_query sieve_calibrate sieve_filter sieve_index sieve_storage sieve_text
                sieve_gpu sieve_gpu_host)
install(TARGETS ${_sieve_libs} EXPORT sieveTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT sieve_dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT sieve_dev)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/sieve" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT sieve_dev FILES_MATCHING PATTERN "*.h")

set(SIEVE_CONFIG_CUDA OFF)
if(TARGET sieve_raft)
  set(SIEVE_CONFIG_CUDA ON)
  install(FILES ${SIEVE_RAPIDS_LIBRARIES} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT sieve_dev)
  # Where the build found the toolkit, a hint for the application's find_dependency.
  get_filename_component(SIEVE_CONFIG_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()

set(_sieve_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/sieve)
install(EXPORT sieveTargets NAMESPACE sieve:: DESTINATION ${_sieve_cmake_dir}
        COMPONENT sieve_dev)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/sieveConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/cmake/sieveConfig.cmake"
                              INSTALL_DESTINATION ${_sieve_cmake_dir})
# 0.x releases make no compatibility promise between minor versions.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/sieveConfigVersion.cmake"
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/sieveConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/sieveConfigVersion.cmake"
        DESTINATION ${_sieve_cmake_dir} COMPONENT sieve_dev)
