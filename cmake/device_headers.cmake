# The device headers: the per-ray code Prism's own kernels are written in,
# handed to a renderer's own kernels as they are, not copied into another
# API. They live where they are installed:
#
#   include/prism/device.cuh      the public CUDA header
#   include/prism/device_view.h   its C side: prism_device_view
#   include/prism/device/*.h      the kernel headers
#
# The kernel headers include each other by bare name ("traverse.h"), which
# resolves between siblings of one directory; the public headers include
# "prism/device/x.h". Code built here and code built against the install
# see the same names.
#
# NVRTC has no file system of headers: the same files, the public headers
# and four small libc headers (engine/module/nvrtc_libc/) are compiled into
# the library (prism__device_headers) and given to every runtime compilation.

set(dev ${PROJECT_SOURCE_DIR}/include/prism/device)
set(PRISM_DEVICE_KERNEL_HEADERS
  ${dev}/prism_hd.h ${dev}/vec.h ${dev}/kmath.h ${dev}/philox.h ${dev}/ray_triangle.h
  ${dev}/geometry_view.h ${dev}/bvh_traverse.h ${dev}/bvh_wide.h ${dev}/bvh_wide_traverse.h
  ${dev}/traverse.h ${dev}/traverse_gpu.h ${dev}/shade.h ${dev}/camera.h ${dev}/photon.h
  ${dev}/physics.h ${dev}/surface_model.h ${dev}/source.h ${dev}/spawn.h ${dev}/optics_view.h
  ${dev}/genstep.h)
set(inc ${PROJECT_SOURCE_DIR}/include/prism)
set(PRISM_PUBLIC_HEADERS
  ${inc}/prism.h ${inc}/export.h ${inc}/result.h ${inc}/context.h ${inc}/memory.h
  ${inc}/placement.h ${inc}/scene.h ${inc}/bvh.h ${inc}/geometry.h ${inc}/render.h
  ${inc}/propagate.h ${inc}/kernels.h ${inc}/module.h ${inc}/device_view.h ${inc}/device.cuh
  ${inc}/gensteps.h)
set(libc ${PROJECT_SOURCE_DIR}/engine/module/nvrtc_libc)
set(PRISM_NVRTC_LIBC_HEADERS ${libc}/math.h ${libc}/stdbool.h ${libc}/stddef.h ${libc}/stdint.h)

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

# Installed with the public headers (cmake/install.cmake installs include/prism).
