# assimp's COLLADA test set, loaded by Prism and compared with assimp (an
# independent loader). Added only where libassimp is found; the test skips
# itself (exit 77) when the models (Debian assimp-testmodels) are absent.
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

if(_assimp_set_library)
  set(PRISM_ASSIMP_MODELS /usr/share/assimp/models/Collada CACHE PATH
    "assimp's COLLADA test models (Debian assimp-testmodels)")
  prism_test(NAME assimp_set SOURCES test_assimp_set.c LIBRARIES ${_assimp_set_library})
  target_compile_definitions(test_assimp_set PRIVATE
    PRISM_ASSIMP_MODELS="${PRISM_ASSIMP_MODELS}")
endif()
