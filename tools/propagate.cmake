# prism-propagate DETECTOR.dae: photons through a detector, hits and final
# photons kept as NumPy .npy files, a summary, CUDA-against-host validation.
add_executable(prism-propagate ${CMAKE_CURRENT_LIST_DIR}/prism_propagate.c
  ${CMAKE_CURRENT_LIST_DIR}/propagate_options.c ${CMAKE_CURRENT_LIST_DIR}/propagate_batches.c
  ${CMAKE_CURRENT_LIST_DIR}/propagate_summary.c ${CMAKE_CURRENT_LIST_DIR}/propagate_validate.c
  ${CMAKE_CURRENT_LIST_DIR}/propagate_devices.c ${CMAKE_CURRENT_LIST_DIR}/propagate_visible.c
  ${CMAKE_CURRENT_LIST_DIR}/propagate_ranks.c ${CMAKE_CURRENT_LIST_DIR}/propagate_group_fork.c
  ${CMAKE_CURRENT_LIST_DIR}/propagate_cursor.c ${CMAKE_CURRENT_LIST_DIR}/propagate_launch.c)
target_link_libraries(prism-propagate PRIVATE prism_static prism_tool_support prism_warnings)
if(PRISM_HAVE_MPI)
  # mpirun -np N prism-propagate: the ranks share the run as --processes' do
  target_sources(prism-propagate PRIVATE ${CMAKE_CURRENT_LIST_DIR}/propagate_group_mpi.c)
  target_link_libraries(prism-propagate PRIVATE MPI::MPI_C)
  target_compile_definitions(prism-propagate PRIVATE PRISM_HAVE_MPI)
endif()
install(TARGETS prism-propagate RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
