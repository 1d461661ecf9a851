# Runs `tessera-cli mapping EXPR FLAGS...` and compares stdout byte for byte with a file.
#   -DCLI=path -DEXPR=expression [-DFLAGS="--json|..."] -DEXPECTED=file
string(REPLACE "|" ";" flags "${FLAGS}")
list(FILTER flags EXCLUDE REGEX "^$")
execute_process(COMMAND ${CLI} mapping ${EXPR} ${flags} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 50)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-cli mapping ${EXPR}: exit status ${rc}\n${err}")
endif()
file(READ ${EXPECTED} expected)
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "tessera-cli mapping ${EXPR} ${flags}: output differs from ${EXPECTED}\n--- got:\n${out}\n--- expected:\n${expected}")
endif()
