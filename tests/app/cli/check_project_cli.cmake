# `tessera-cli project` end to end (issue 8): new -> show -> run --save -> run (ratios against the
# saved run) -> show --json; another machine's run gives a note; a newer-version project refuses
# --save and stays unchanged; a corrupt project names line:column.
#   -DCLI=path/to/tessera-cli -DSAMPLES=dir -DWORK=scratch dir
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/models ${WORK}/projects)
file(COPY ${SAMPLES}/dw_pw_block.onnx DESTINATION ${WORK}/models)
set(P ${WORK}/projects/block.tessera)

function(cli expect_rc)
  execute_process(COMMAND ${CLI} ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 240)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "tessera-cli ${ARGN}: exit ${rc}, expected ${expect_rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()

function(expect_has text what)
  string(FIND "${text}" "${what}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "expected '${what}' in:\n${text}")
  endif()
endfunction()

function(expect_match text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "expected a match of '${regex}' in:\n${text}")
  endif()
endfunction()

cli(0 project new models/dw_pw_block.onnx -o ${P} --plan hidet --hw host)
expect_has("${OUT}" "source ../models/dw_pw_block.onnx, plan hidet (planned when run), target cpu, hardware host")
cli(2 project new models/dw_pw_block.onnx -o ${P})
expect_has("${ERR}" "the file exists (give --force to replace it)")
cli(2 project new models/missing.onnx -o ${WORK}/projects/x.tessera)
expect_has("${ERR}" "missing.onnx")
cli(2 project new models/dw_pw_block.onnx -o ${WORK}/projects/y.tessera --target tpu)
expect_has("${ERR}" "--target tpu")

cli(0 project show ${P})
expect_has("${OUT}" "plan: hidet (planned when run)")
expect_has("${OUT}" "runs: 0")

cli(0 project run ${P} --save --reps 2)
expect_has("${OUT}" "no earlier run of cpu in the project")
expect_has("${OUT}" "saved as run 1 of")
expect_match("${OUT}" "dw_conv +Conv +[0-9.]+ [mu]?s +- +- +[0-9.]+e-[0-9]+")

# The short form `project FILE.tessera` is `project run FILE.tessera`.
cli(0 project ${P} --reps 2)
expect_has("${OUT}" "compared with the last recorded run of cpu")
expect_match("${OUT}" "dw_conv +Conv +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s +[0-9.]+x")
expect_match("${OUT}" "pw_conv +Conv +[0-9.]+ [mu]?s +[0-9.]+ [mu]?s +[0-9.]+x")
string(FIND "${OUT}" "another machine" other)
if(NOT other EQUAL -1)
  message(FATAL_ERROR "a run on the same machine was called another machine:\n${OUT}")
endif()

cli(0 project show ${P} --json)
string(JSON nruns LENGTH "${OUT}" runs)
string(JSON nkernels LENGTH "${OUT}" runs 0 kernels)
string(JSON srcpath GET "${OUT}" source path)
string(JSON k0 GET "${OUT}" runs 0 kernels 0 name)
string(JSON nodes0 LENGTH "${OUT}" runs 0 kernels 0 nodes)
string(JSON target GET "${OUT}" runs 0 target)
if(NOT nruns EQUAL 1 OR NOT nkernels EQUAL 2 OR NOT srcpath STREQUAL "../models/dw_pw_block.onnx"
   OR NOT k0 STREQUAL "dw_conv" OR NOT nodes0 EQUAL 2 OR NOT target STREQUAL "cpu")
  message(FATAL_ERROR "project show --json: runs ${nruns}, kernels ${nkernels}, path ${srcpath}, k0 ${k0}, nodes ${nodes0}, target ${target}\n${OUT}")
endif()

# The saved run came from another machine: the comparison says so.
file(READ ${P} text)
string(REGEX REPLACE "\"fingerprint\": \"[^\"]*\"" "\"fingerprint\": \"Other CPU | 64 logical CPUs\"" text "${text}")
file(WRITE ${P} "${text}")
cli(0 project run ${P} --reps 1 --json)
string(JSON same GET "${OUT}" last_run same_machine)
string(JSON ratio GET "${OUT}" kernels 0 ratio)
string(JSON saved GET "${OUT}" saved)
if(NOT same STREQUAL "OFF" OR NOT ratio MATCHES "^[0-9.e+-]+$" OR NOT saved STREQUAL "OFF")
  message(FATAL_ERROR "project run --json: same_machine ${same}, ratio ${ratio}, saved ${saved}\n${OUT}")
endif()
cli(0 project run ${P} --reps 1)
expect_has("${OUT}" "note: the last recorded run came from another machine (Other CPU | 64 logical CPUs)")

# A project of a newer version: shown, run, but --save is refused and the file stays as it was.
string(REPLACE "\"version\": 2," "\"version\": 5," future "${text}")
file(WRITE ${WORK}/projects/future.tessera "${future}")
cli(2 project run ${WORK}/projects/future.tessera --save --reps 1)
expect_has("${ERR}" "--save refused: the project is of version 5")
file(READ ${WORK}/projects/future.tessera after)
if(NOT after STREQUAL future)
  message(FATAL_ERROR "a refused --save changed the newer-version project")
endif()
cli(0 project show ${WORK}/projects/future.tessera)
expect_has("${OUT}" "(version 5, newer than this Tessera: read-only)")
expect_has("${ERR}" "opened read-only, saving is disabled")

# Corrupt: line:column, nothing written.
file(WRITE ${WORK}/projects/bad.tessera "{\n  \"format\": \"tessera-project\",\n  \"version\": 1,,\n}\n")
cli(2 project run ${WORK}/projects/bad.tessera --save)
expect_has("${ERR}" "bad.tessera:3:16: error: not valid JSON")
file(READ ${WORK}/projects/bad.tessera bad)
if(NOT bad STREQUAL "{\n  \"format\": \"tessera-project\",\n  \"version\": 1,,\n}\n")
  message(FATAL_ERROR "a corrupt project was changed")
endif()
cli(2 project show ${WORK}/projects/nothing.tessera)
expect_has("${ERR}" "nothing.tessera: error: cannot read the project: no such file")

# Schedules (project version 2): `project show` lists them and `project run` compiles with them,
# so a mapping that does not fit its kernel fails the run naming the node.
file(READ ${P} text)
string(REPLACE "\"schedules\": []" "\"schedules\": [{\"node\": \"dw_conv\", \"grid\": \"spatial(1,4,2,2)\", \"block\": \"\"}]" sched "${text}")
file(WRITE ${WORK}/projects/sched.tessera "${sched}")
cli(0 project show ${WORK}/projects/sched.tessera)
expect_has("${OUT}" "schedule dw_conv: grid spatial(1,4,2,2)\n")
cli(2 project run ${WORK}/projects/sched.tessera --reps 1)
expect_has("${ERR}" "grid mapping spatial(1,4,2,2) of kernel 'dw_conv' does not fit the output [1,32,56,56]")

# The model moved away: run names the path it looked for.
file(REMOVE ${WORK}/models/dw_pw_block.onnx)
cli(2 project run ${P})
expect_has("${ERR}" "models/dw_pw_block.onnx' not found")
file(REMOVE_RECURSE ${WORK})

