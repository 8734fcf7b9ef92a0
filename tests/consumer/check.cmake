# cmake -P: install the build tree into WORK/prefix, then build and run the
# consumer with find_package(Prism) and with pkg-config.
file(REMOVE_RECURSE ${WORK})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install ${PRISM_BUILD} --prefix ${WORK}/prefix)
run("configure" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK}/prefix "-DCMAKE_C_FLAGS=${C_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${C_FLAGS}")
run("build" ${CMAKE_COMMAND} --build ${WORK}/build)
run("run" ${WORK}/build/consumer)
message("${last_output}consumer: cmake ok")

file(GLOB pc_dirs ${WORK}/prefix/lib*/pkgconfig ${WORK}/prefix/lib/*/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "${pc_dirs}")
unset(ENV{PKG_CONFIG_SYSROOT_DIR})
run("pkg-config" pkg-config --define-variable=prefix=${WORK}/prefix --cflags --libs prism)
string(STRIP "${last_output}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
list(GET pc_dirs 0 pc_dir)
get_filename_component(libdir ${pc_dir} DIRECTORY)
separate_arguments(cflags UNIX_COMMAND "${C_FLAGS}")
run("cc" cc ${cflags} ${SOURCE}/main.c -o ${WORK}/consumer-pc ${pc_flags} -Wl,-rpath,${libdir})
run("run (pkg-config)" ${WORK}/consumer-pc)
message("${last_output}consumer: pkg-config ok")
