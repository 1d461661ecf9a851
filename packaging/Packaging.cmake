# CPack .deb: the IDE, the CLI and the kernel runner, with the icon, desktop entry and AppStream
# metadata of resources/ and the samples. Build it with packaging/build-deb.sh; check it in a clean
# Debian 12 root with packaging/test-deb.sh (packaging/README.md).
set(TESSERA_RESOURCES ${PROJECT_SOURCE_DIR}/resources)
if(TESSERA_GUI AND TARGET tessera)
  install(TARGETS tessera RUNTIME DESTINATION bin)
  install(FILES ${TESSERA_RESOURCES}/io.tessera.Tessera.desktop DESTINATION share/applications)
  install(FILES ${TESSERA_RESOURCES}/io.tessera.Tessera.metainfo.xml DESTINATION share/metainfo)
  # The icon the desktop entry names (Icon=io.tessera.Tessera): the SVG and its PNG renders.
  install(FILES ${TESSERA_RESOURCES}/icons/io.tessera.Tessera.svg DESTINATION share/icons/hicolor/scalable/apps)
  foreach(size 48 128 256)
    install(FILES ${TESSERA_RESOURCES}/icons/io.tessera.Tessera-${size}.png
            DESTINATION share/icons/hicolor/${size}x${size}/apps RENAME io.tessera.Tessera.png)
  endforeach()
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
# Kernels run in tessera-runner, which tessera and tessera-cli look for next to their own executable
# (core/runtime/runner_client.h: findRunnerExecutable), so it goes to bin as well.
if(TARGET tessera-runner)
  install(TARGETS tessera-runner RUNTIME DESTINATION bin)
endif()

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "tessera")
set(CPACK_PACKAGE_CONTACT "Tessera developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "IDE for tensor programs: graphs, task mappings, fusion, JIT and rooflines")
set(CPACK_PACKAGE_DESCRIPTION "Load an ONNX model or a Tessera DSL program, see its operator graph,\n\
edit task mappings and fusion plans, JIT-compile kernels for CPU and GPU and read\n\
their timings against a roofline. Contains the desktop IDE (tessera), the command\n\
line (tessera-cli) and the kernel runner (tessera-runner).")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# tessera_<version>_<arch>.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Binaries without symbols (with the debug info of a RelWithDebInfo build, tessera and tessera-cli
# take some 320 MB; the package of a stripped Release build is about 20 MB).
set(CPACK_STRIP_FILES ON)
# The libraries the binaries link (dpkg-shlibdeps), plus what the CPU JIT runs at run time
# (core/runtime/host_jit.h): the host compiler `c++` (the g++ package provides it and pulls in the
# C++ headers and omp.h) with -fopenmp, whose kernels load libgomp. CUDA stays optional: the driver
# and NVRTC are found with dlopen when a GPU target is used.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "g++, libgomp1")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nvidia-cuda-toolkit")
include(CPack)
