# The Python package's pytest suites (tests/python/test_*.py), one ctest
# entry per file, run on the package assembled in the build folder
# (python/CMakeLists.txt). Registered when the extension is built
# (PRISM_BUILD_PYTHON, as `make test` configures); a file whose tests all
# skip (test_gpu.py without a device), or a Python without NumPy or pytest,
# reports skipped (77). python_reference runs the same cases through the C
# API for the comparison tests. OpenMP threads wait passively: the suites
# make thousands of small parallel regions, and spinning threads on a busy
# 2-core machine (ctest -j2) made the leak suite 20x slower.
if(NOT TARGET prism_python)
  return()
endif()

add_executable(python_reference python/python_reference.c)
target_link_libraries(python_reference PRIVATE prism_static prism_warnings)

# In a sanitizer build the interpreter is not instrumented: ASan's runtime
# must be loaded first, and what CPython leaves alive at exit is not ours
# to report (test_leaks.py counts our allocations itself; its resident
# memory checks, which ASan's quarantine defeats, run in the plain build).
set(sanitizer_env "")
if(PRISM_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(sanitizer_env "LD_PRELOAD=${asan_runtime};ASAN_OPTIONS=detect_leaks=0;PRISM_SANITIZED=1")
endif()

file(GLOB PRISM_PYTESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/test_*.py)
# test_installed.py checks a `pip install .` (.ci/run's venv step), which
# the build tree is not
list(FILTER PRISM_PYTESTS EXCLUDE REGEX "/test_installed\\.py$")
foreach(file IN LISTS PRISM_PYTESTS)
  get_filename_component(name ${file} NAME_WE)
  string(REGEX REPLACE "^test_" "python_" test ${name})
  add_test(NAME ${test} COMMAND ${PRISM_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/run.py
    ${file})
  set(labels host python)
  if(name MATCHES "_gpu$")
    set(labels gpu python)
  endif()
  set_tests_properties(${test} PROPERTIES SKIP_RETURN_CODE 77 LABELS "${labels}" TIMEOUT 120
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1;OMP_WAIT_POLICY=passive;PRISM_ASSETS=${PRISM_ASSETS};PRISM_TEST_DATA=${PRISM_TEST_DATA};PRISM_PYTHON_REFERENCE=$<TARGET_FILE:python_reference>;${sanitizer_env}")
endforeach()
