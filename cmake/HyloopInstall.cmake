# `cmake --install build [--prefix P]` and `cpack` (a .deb): the binaries, the libraries and
# headers with a CMake package (find_package(hyloop), hyloop_add_kind), the protos, the
# scenarios and data, the report scripts. Layout under the prefix:
#   bin/hyloop, bin/hyloop-<service>     lib/libhyloop_*.a     lib/hyloop/kinds/ (the shipped
#                                                                kinds' plug-ins)
#   include/hyloop/...                   lib/cmake/hyloop/     share/hyloop/{proto,scenarios,
#   data,report.py,hyloop_report}
# The binaries find share/hyloop and lib/hyloop/kinds beside themselves (bin/..), so a prefix
# can be moved as a whole.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(HYLOOP_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hyloop)
set(HYLOOP_INSTALL_KINDS_DIR lib/hyloop/kinds)  # bin/../lib/hyloop/kinds: not multiarch
set(HYLOOP_INSTALL_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/hyloop)

set(hyloop_installed_libraries hyloop_core hyloop_hal hyloop_hal_egm hyloop_experiment hyloop_recording hyloop_jobs hyloop_proto
                               hyloop_transport hyloop_runtime hyloop_warnings)
install(TARGETS ${hyloop_installed_libraries} EXPORT hyloopTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(lib core hal experiment recording jobs transport runtime)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/libs/${lib}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/include/hyloop/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hyloop)
install(DIRECTORY ${PROJECT_BINARY_DIR}/proto/hyloop DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.pb.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/proto/hyloop DESTINATION ${HYLOOP_INSTALL_SHARE_DIR}/proto
        FILES_MATCHING PATTERN "*.proto")
install(EXPORT hyloopTargets NAMESPACE hyloop:: DESTINATION ${HYLOOP_INSTALL_CMAKE_DIR})

string(JOIN ";" HYLOOP_HDF5_LIBRARIES ${HDF5_C_LIBRARIES})
string(JOIN ";" HYLOOP_MATIO_LIBRARIES ${MATIO_LINK_LIBRARIES})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hyloopConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/hyloopConfig.cmake
                              INSTALL_DESTINATION ${HYLOOP_INSTALL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/hyloopConfigVersion.cmake
                                 COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/hyloopConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/hyloopConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/HyloopKind.cmake ${PROJECT_SOURCE_DIR}/cmake/hyloop_kind.map
        DESTINATION ${HYLOOP_INSTALL_CMAKE_DIR})

install(TARGETS hyloop hyloop-rig-emulator hyloop-sensor hyloop-actuator hyloop-dynamics
                hyloop-identification hyloop-coordinator
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
get_property(hyloop_shipped_kind_targets GLOBAL PROPERTY HYLOOP_SHIPPED_KIND_TARGETS)
install(TARGETS ${hyloop_shipped_kind_targets} LIBRARY DESTINATION ${HYLOOP_INSTALL_KINDS_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios ${PROJECT_SOURCE_DIR}/data
        DESTINATION ${HYLOOP_INSTALL_SHARE_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/tools/report.py DESTINATION ${HYLOOP_INSTALL_SHARE_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tools/hyloop_report DESTINATION ${HYLOOP_INSTALL_SHARE_DIR}
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# cpack -G DEB (in build/): hyloop_<version>_<arch>.deb, installing under /usr. Its run-time
# libraries come from dpkg-shlibdeps; the report's plots need Python with matplotlib.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hyloop)
set(CPACK_PACKAGE_VENDOR "hyloop")
set(CPACK_PACKAGE_CONTACT "hyloop developers <hyloop@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Real-time hybrid simulation and hardware-in-the-loop testing with delay compensation")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, python3-matplotlib, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++, libeigen3-dev, libyaml-cpp-dev, nlohmann-json3-dev")
set(CPACK_STRIP_FILES ON)
include(CPack)
