# `cmake --install build --prefix P`: the rooftune binary, librooftune.so with its public header,
# and the CMake and pkg-config packages a program finds them with:
#   find_package(rooftune 0.3 CONFIG REQUIRED) + target_link_libraries(app rooftune::rooftune)
#   pkg-config --cflags --libs rooftune
include(CMakePackageConfigHelpers)

install(TARGETS rooftune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rooftune_valgrind_shim LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/rooftune)
install(TARGETS rooftune_library EXPORT rooftuneTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/rooftune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(ROOFTUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/rooftune)
install(EXPORT rooftuneTargets NAMESPACE rooftune:: DESTINATION ${ROOFTUNE_CMAKE_DIR})
configure_package_config_file(cmake/rooftuneConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rooftuneConfig.cmake INSTALL_DESTINATION ${ROOFTUNE_CMAKE_DIR})
# 0.x: a minor version may change the API, so 0.3 is satisfied by 0.3.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rooftuneConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/rooftuneConfig.cmake
  ${PROJECT_BINARY_DIR}/rooftuneConfigVersion.cmake DESTINATION ${ROOFTUNE_CMAKE_DIR})

# The prefix is found from the .pc file's own place, so that `--prefix` at install time holds.
file(RELATIVE_PATH ROOFTUNE_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/rooftune.pc.in ${PROJECT_BINARY_DIR}/rooftune.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rooftune.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
