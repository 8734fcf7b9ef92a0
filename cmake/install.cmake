# Installed tree: headers, libprism.so.0, a CMake package (find_package(Prism),
# target Prism::prism) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS prism EXPORT PrismTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/prism DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT PrismTargets NAMESPACE Prism:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Prism)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/PrismConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PrismConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Prism)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PrismConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/PrismConfig.cmake ${PROJECT_BINARY_DIR}/PrismConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Prism)
configure_file(${PROJECT_SOURCE_DIR}/cmake/prism.pc.in ${PROJECT_BINARY_DIR}/prism.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/prism.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
