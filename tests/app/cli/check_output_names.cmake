# `run --output-dir` keeps output names' UTF-8 and replaces only '/', NUL and control characters:
# tests/data/unicode_output_names.onnx has outputs 'выход 😀' and 'a/b:c'.
#   -DCLI=tessera-cli -DMODEL=... -DDIR=scratch folder
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND ${CLI} run ${MODEL} --output-dir ${DIR} --no-timing
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}\n${out}\n${err}")
endif()
foreach(f "выход 😀.npy" "a_b:c.npy")
  if(NOT EXISTS "${DIR}/${f}")
    file(GLOB got RELATIVE "${DIR}" "${DIR}/*")
    message(FATAL_ERROR "missing '${f}' in ${DIR}; found: ${got}\n${out}")
  endif()
endforeach()
