# assimp's COLLADA test set, loaded by Prism and compared with assimp (an
# independent loader). Added only where libassimp is found; the test skips
# itself (exit 77) when the models (Debian assimp-testmodels) are absent.
# Like tests/assets.cmake, it waits for the loader (a geometry/*.c that
# defines prism_scene_free) so that the tree keeps building meanwhile.
find_package(assimp QUIET)
set(_assimp_set_library "")
if(TARGET assimp::assimp)
  set(_assimp_set_library assimp::assimp)
else()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PRISM_ASSIMP QUIET IMPORTED_TARGET assimp)
    if(PRISM_ASSIMP_FOUND)
      set(_assimp_set_library PkgConfig::PRISM_ASSIMP)
    endif()
  endif()
endif()

file(GLOB _assimp_set_sources ${PROJECT_SOURCE_DIR}/geometry/*.c)
set(_assimp_set_loader OFF)
foreach(_f IN LISTS _assimp_set_sources)
  file(STRINGS ${_f} _def REGEX "prism_scene_free *\\([^;]*$")
  if(_def)
    set(_assimp_set_loader ON)
  endif()
endforeach()

if(_assimp_set_library AND _assimp_set_loader)
  set(PRISM_ASSIMP_MODELS /usr/share/assimp/models/Collada CACHE PATH
    "assimp's COLLADA test models (Debian assimp-testmodels)")
  prism_test(NAME assimp_set SOURCES test_assimp_set.c LIBRARIES ${_assimp_set_library})
  target_compile_definitions(test_assimp_set PRIVATE
    PRISM_ASSIMP_MODELS="${PRISM_ASSIMP_MODELS}")
endif()
