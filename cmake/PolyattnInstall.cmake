# `cmake --install`: the header, libpolyattn (versioned SONAME), the GPU backend
# modules next to it (the library looks for them in its own directory), the
# polyattn command, a CMake package (find_package(polyattn CONFIG) ->
# polyattn::polyattn), a pkg-config file and the Python package. Every file is
# relocatable: the CMake package, polyattn.pc and the Python package locate the
# library relative to where they are installed, so `--prefix` may differ from
# CMAKE_INSTALL_PREFIX.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(POLYATTN_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/polyattn" CACHE STRING
    "Where the CMake package files are installed (relative to the prefix)")
option(POLYATTN_INSTALL_PYTHON "Install the Python package (bindings/python/polyattn)" ON)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  set(pa_py_default "${CMAKE_INSTALL_LIBDIR}/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages")
else()
  set(pa_py_default "${CMAKE_INSTALL_LIBDIR}/python3/site-packages")
endif()
set(POLYATTN_PYTHON_INSTALL_DIR "${pa_py_default}" CACHE STRING
    "Where the Python package is installed (relative to the prefix, or absolute)")

# The same target name in the build tree, for projects that add_subdirectory(polyattn).
add_library(polyattn::polyattn ALIAS polyattn)

install(TARGETS polyattn EXPORT polyattnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/api/include/polyattn.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# GPU modules: loaded at run time, never linked, so not part of the export.
foreach(pa_module polyattn-cuda polyattn-hip polyattn-vulkan)
  if(TARGET ${pa_module})
    install(TARGETS ${pa_module} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endforeach()
if(TARGET polyattn_cli)
  file(RELATIVE_PATH pa_bin_to_lib "/_p/${CMAKE_INSTALL_BINDIR}" "/_p/${CMAKE_INSTALL_LIBDIR}")
  set_target_properties(polyattn_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${pa_bin_to_lib}")
  install(TARGETS polyattn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# CMake package
install(EXPORT polyattnTargets NAMESPACE polyattn:: DESTINATION ${POLYATTN_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/polyattnConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/polyattnConfig.cmake
  INSTALL_DESTINATION ${POLYATTN_CMAKE_DIR})
# 0.x: a minor release may change the API (the SONAME stays .so.0 within 0.x).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/polyattnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/polyattnConfig.cmake
              ${CMAKE_BINARY_DIR}/install/polyattnConfigVersion.cmake
  DESTINATION ${POLYATTN_CMAKE_DIR})

# pkg-config: prefix relative to the .pc file's own directory.
file(RELATIVE_PATH PA_PC_TO_PREFIX "/_p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_p")
string(REGEX REPLACE "/$" "" PA_PC_TO_PREFIX "${PA_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/polyattn.pc.in ${CMAKE_BINARY_DIR}/install/polyattn.pc
  @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/polyattn.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Python package, and polyattn/_install.py: where the library is, from the package.
if(POLYATTN_INSTALL_PYTHON)
  if(IS_ABSOLUTE "${POLYATTN_PYTHON_INSTALL_DIR}")
    set(PA_PY_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  else()
    file(RELATIVE_PATH PA_PY_LIBDIR "/_p/${POLYATTN_PYTHON_INSTALL_DIR}/polyattn"
         "/_p/${CMAKE_INSTALL_LIBDIR}")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/python_install.py.in
    ${CMAKE_BINARY_DIR}/install/_install.py @ONLY)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings/python/polyattn
    DESTINATION ${POLYATTN_PYTHON_INSTALL_DIR}
    FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  install(FILES ${CMAKE_BINARY_DIR}/install/_install.py
    DESTINATION ${POLYATTN_PYTHON_INSTALL_DIR}/polyattn)
endif()
