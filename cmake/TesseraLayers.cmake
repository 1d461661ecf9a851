# The layers of core/, in build order: each entry is "<library> <folder under core/> <the libraries
# right below it>". core/CMakeLists.txt builds one static library per entry from the folder's
# sources (subfolders included) and links it PUBLIC to the libraries named, so a layer sees every
# layer before it and none after it. cmake/CheckLayers.cmake (CTest label `layers`) reads the same
# table: a file in a layer's folder may include headers of that folder and of the layers it links,
# directly or through them, and nothing else under core/.
#
# Order: support -> ir, target -> schedule -> frontend (dsl; onnx is a library of its own because it
# links libonnx, and only pipeline uses it) -> eval -> lower -> codegen -> runtime -> perf ->
# pipeline -> project.
set(TESSERA_CORE_LAYERS
  "tessera_support support"
  "tessera_ir ir tessera_support"
  "tessera_target target tessera_support"
  "tessera_schedule schedule tessera_ir tessera_target"
  "tessera_frontend frontend/dsl tessera_schedule"
  "tessera_onnx frontend/onnx tessera_schedule"
  "tessera_eval eval tessera_frontend"
  "tessera_lower lower tessera_eval"
  "tessera_codegen codegen tessera_lower"
  "tessera_runtime runtime tessera_codegen"
  "tessera_perf perf tessera_runtime"
  "tessera_pipeline pipeline tessera_perf tessera_onnx"
  "tessera_project project tessera_pipeline")
