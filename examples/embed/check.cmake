# cmake -P: the embedding example builds against an installed Prism with
# find_package(Prism) and draws the photons Prism wrote into its buffer.
# -DPRISM_BUILD=<build tree> -DWORK=<scratch> -DSOURCE=<examples/embed>
# -DGENERATOR=... -DSCENE=<a .dae>. Runs the program under xvfb-run when
# there is no display; builds only when neither exists.
file(REMOVE_RECURSE ${WORK})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "embed: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${PRISM_BUILD} --prefix ${WORK}/prefix)
run("configure" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK}/prefix "-DCMAKE_C_FLAGS=${C_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${C_FLAGS}")
run("build" ${CMAKE_COMMAND} --build ${WORK}/build)
message("embed: build ok")

# Under AddressSanitizer, glfwTerminate unloads Mesa's driver and the
# blocks Mesa leaks then have stacks no suppression can name (prism-view
# keeps the driver loaded instead; an example should stay plain). Prism's
# own leaks are checked by its suites.
if(C_FLAGS MATCHES "address")
  set(ENV{ASAN_OPTIONS} "$ENV{ASAN_OPTIONS}:detect_leaks=0")
endif()
find_program(XVFB_RUN xvfb-run)
if(DEFINED ENV{DISPLAY} AND NOT "$ENV{DISPLAY}" STREQUAL "")
  run("run" ${WORK}/build/embed ${SCENE} 3)
elseif(XVFB_RUN)
  run("run" ${XVFB_RUN} -a -s "-screen 0 1024x768x24" ${WORK}/build/embed ${SCENE} 3)
else()
  message("embed: no display and no xvfb-run: not run")
  return()
endif()
if(NOT last_output MATCHES "GL buffers written by the (upload \\(interop\\)|program)")
  message(FATAL_ERROR "embed: the detector's GL buffers were not reported:\n${last_output}")
endif()
message("${last_output}embed: run ok")
