# Build options. TESSERA_GUI=OFF builds core, tessera-cli and the core tests without any Qt
# (this is the configuration that builds on the GPU machine).
option(TESSERA_GUI "Build the Qt desktop application and its views" ON)
set(TESSERA_CUDA "AUTO" CACHE STRING "CUDA support: ON, OFF or AUTO (on when the CUDA toolkit is found)")
set_property(CACHE TESSERA_CUDA PROPERTY STRINGS ON OFF AUTO)
option(TESSERA_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(TESSERA_BUILD_BENCH "Build the benchmark harnesses in bench/" ON)
# libFuzzer targets (tests/fuzz); needs clang: CC=clang CXX=clang++ cmake -DTESSERA_FUZZ=ON ...
option(TESSERA_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)

if(TESSERA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

add_compile_options(-Wall -Wextra)
