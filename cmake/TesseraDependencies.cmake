# Third-party dependencies (Debian 12 packages; see scripts/install-deps.sh).
# Order matters: Protobuf before ONNX, Qt6 PrintSupport before QCustomPlotQt6.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

if(TESSERA_GUI)
  set(CMAKE_AUTOMOC ON)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Test Concurrent PrintSupport Svg SvgWidgets)
  find_package(QCustomPlotQt6 REQUIRED)  # after Qt6 PrintSupport: its config does not find it
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(GVC REQUIRED IMPORTED_TARGET libgvc libcgraph)
endif()

set(TESSERA_HAVE_CUDA OFF)
if(NOT TESSERA_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(TESSERA_HAVE_CUDA ON)
  elseif(TESSERA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TESSERA_CUDA=ON but the CUDA toolkit was not found")
  endif()
endif()
message(STATUS "Tessera: GUI=${TESSERA_GUI} CUDA=${TESSERA_HAVE_CUDA} sanitize=${TESSERA_SANITIZE}")
