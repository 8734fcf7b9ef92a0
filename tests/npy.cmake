# The .npy reader and writer (tools/npy.c): round trip, bad inputs, atomic
# writes; npy_numpy checks them against NumPy itself (skipped without it).
if(TARGET prism_tool_support)
  prism_test(NAME npy SOURCES test_npy.c exec_util.c LIBRARIES prism_tool_support TIMEOUT 60)
  # A python3 that imports numpy (Debian: python3-numpy): the first python3
  # on PATH, else /usr/bin/python3 (a pyenv or venv python3 may lack it).
  # PRISM_PYTHON3 chooses one; without NumPy the test reports skipped.
  set(PRISM_PYTHON3 "" CACHE FILEPATH "python3 with NumPy for the .npy interop test")
  set(prism_python ${PRISM_PYTHON3})
  if(NOT prism_python)
    find_program(PRISM_PYTHON3_ON_PATH python3)
    foreach(candidate ${PRISM_PYTHON3_ON_PATH} /usr/bin/python3)
      execute_process(COMMAND ${candidate} -c "import numpy" RESULT_VARIABLE rc
                      OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(prism_python ${candidate})
        break()
      endif()
    endforeach()
  endif()
  add_test(NAME npy_numpy COMMAND test_npy --numpy)
  set_tests_properties(npy_numpy PROPERTIES LABELS host SKIP_RETURN_CODE 77 TIMEOUT 60
    ENVIRONMENT "PRISM_PYTHON3=${prism_python}")
endif()
