# The device headers: the per-ray code Prism's own kernels are written in
# (engine/kernels/*.h and the BVH walk of geometry/), handed to a renderer's
# own kernels as they are, not copied into another API.
#
#   include/prism/device.cuh      the public CUDA header (source tree)
#   include/prism/device_view.h   its C side: prism_device_view (source tree)
#   <prefix>/include/prism/device/*.h   the kernel headers, installed flat
#
# The kernel headers include each other by bare name ("traverse.h"), which
# resolves between siblings of one directory, so they are installed flat
# into prism/device/, and the public headers include "prism/device/x.h".
# In the build tree the same layout is staged under
# ${PROJECT_BINARY_DIR}/include (a copy refreshed at every configure: CMake
# re-runs when a copied header changes), so code built here and code built
# against the install see the same names. The engine keeps including its
# headers from engine/ and geometry/.
#
# NVRTC has no file system of headers: the same files, the public headers
# and four small libc headers (engine/nvrtc_libc/) are compiled into the
# library (prism__device_headers) and given to every runtime compilation.

file(GLOB PRISM_DEVICE_KERNEL_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/kernels/*.h
  ${PROJECT_SOURCE_DIR}/geometry/bvh_traverse*.h ${PROJECT_SOURCE_DIR}/geometry/bvh_wide*.h)
# Launcher tuning declares hidden library functions: not for renderers.
list(FILTER PRISM_DEVICE_KERNEL_HEADERS EXCLUDE REGEX "/render_tuning\\.h$")
list(APPEND PRISM_DEVICE_KERNEL_HEADERS ${PROJECT_SOURCE_DIR}/geometry/prism_hd.h
  ${PROJECT_SOURCE_DIR}/geometry/geometry_view.h ${PROJECT_SOURCE_DIR}/geometry/ray_triangle.h)
file(GLOB PRISM_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/prism/*.h
  ${PROJECT_SOURCE_DIR}/include/prism/*.cuh)
file(GLOB PRISM_NVRTC_LIBC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/engine/nvrtc_libc/*.h)

set(PRISM_DEVICE_STAGE ${PROJECT_BINARY_DIR}/include/prism/device)
set(staged)
foreach(h IN LISTS PRISM_DEVICE_KERNEL_HEADERS)
  get_filename_component(name ${h} NAME)
  configure_file(${h} ${PRISM_DEVICE_STAGE}/${name} COPYONLY)
  list(APPEND staged ${PRISM_DEVICE_STAGE}/${name})
endforeach()
# A header removed from the source must not linger in the stage.
file(GLOB stale ${PRISM_DEVICE_STAGE}/*)
list(REMOVE_ITEM stale ${staged})
if(stale)
  file(REMOVE ${stale})
endif()

target_include_directories(prism_engine PUBLIC ${PROJECT_BINARY_DIR}/include)
target_include_directories(prism PUBLIC $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)

# name=path pairs for the embedding script: each kernel and public header
# under its include name and its bare name (NVRTC matches an #include's
# text against the names given, and does not resolve "x.h" next to the
# including header), the libc headers under their bare names.
set(pairs)
foreach(h IN LISTS PRISM_DEVICE_KERNEL_HEADERS)
  get_filename_component(name ${h} NAME)
  list(APPEND pairs "prism/device/${name}=${h}" "${name}=${h}")
endforeach()
foreach(h IN LISTS PRISM_PUBLIC_HEADERS)
  get_filename_component(name ${h} NAME)
  list(APPEND pairs "prism/${name}=${h}")
  if(name MATCHES "\\.h$")
    list(APPEND pairs "${name}=${h}")
  endif()
endforeach()
foreach(h IN LISTS PRISM_NVRTC_LIBC_HEADERS)
  get_filename_component(name ${h} NAME)
  list(APPEND pairs "${name}=${h}")
endforeach()
set(embed_list ${PROJECT_BINARY_DIR}/engine/device_headers.list)
set(embed_out ${PROJECT_BINARY_DIR}/engine/device_headers_embedded.c)
string(REPLACE ";" "\n" pairs_text "${pairs}")
file(CONFIGURE OUTPUT ${embed_list} CONTENT "${pairs_text}\n" @ONLY)
add_custom_command(OUTPUT ${embed_out}
  COMMAND ${CMAKE_COMMAND} -DLIST=${embed_list} -DOUT=${embed_out}
          -P ${PROJECT_SOURCE_DIR}/cmake/embed_headers.cmake
  DEPENDS ${embed_list} ${PRISM_DEVICE_KERNEL_HEADERS} ${PRISM_PUBLIC_HEADERS}
          ${PRISM_NVRTC_LIBC_HEADERS} ${PROJECT_SOURCE_DIR}/cmake/embed_headers.cmake
  COMMENT "Embedding the device headers for NVRTC"
  VERBATIM)
target_sources(prism_engine PRIVATE ${embed_out})

# Installed flat, next to the public headers that include them.
include(GNUInstallDirs)
install(FILES ${PRISM_DEVICE_KERNEL_HEADERS}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/prism/device)
