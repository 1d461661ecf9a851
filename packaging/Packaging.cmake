# CPack .deb, desktop file and AppStream metadata.
if(TESSERA_GUI AND TARGET tessera)
  install(TARGETS tessera RUNTIME DESTINATION bin)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/tessera.desktop DESTINATION share/applications)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/io.tessera.Tessera.metainfo.xml DESTINATION share/metainfo)
endif()
# The samples the GUI's first run and Welcome panel open (app/gui/welcome_panel.h: samplesDirectory
# looks in <prefix>/share/tessera/samples).
if(TESSERA_GUI AND TARGET tessera)
  file(GLOB TESSERA_DSL_SAMPLES ${PROJECT_SOURCE_DIR}/samples/*.tsr)
  install(FILES ${PROJECT_SOURCE_DIR}/samples/mobilenet_v2.onnx ${PROJECT_SOURCE_DIR}/samples/README.md
          ${TESSERA_DSL_SAMPLES} DESTINATION share/tessera/samples)
endif()
if(TARGET tessera-cli)
  install(TARGETS tessera-cli RUNTIME DESTINATION bin)
endif()
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "tessera")
set(CPACK_PACKAGE_CONTACT "Tessera developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "IDE for tensor programs: graphs, task mappings, fusion, JIT and rooflines")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
