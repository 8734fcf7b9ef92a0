# prism-info FILE.dae: the scene summary (tools/info_scene.c).
target_sources(prism-info PRIVATE ${CMAKE_CURRENT_LIST_DIR}/info_scene.c)
target_compile_definitions(prism-info PRIVATE PRISM_INFO_SCENE)
