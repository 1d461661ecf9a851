# `tessera-cli report MODEL --roofline OUT` with no display: the chart must be written headless.
#   -DCLI=path -DMODEL=file -DOUT=chart file (.png, .svg or .pdf) [-DPROFILE=write a test profile here]
#   [-DMODE=carm|dram|hierarchical] [-DSTDOUT_HAS=text]
# Checks: exit 0, the file exists, is larger than 1 KB and starts with its format's signature
# (PNG magic, "<?xml"/"<svg", "%PDF-"); stdout has the table header and STDOUT_HAS.
file(REMOVE "${OUT}")
set(extra "")
if(DEFINED PROFILE AND NOT PROFILE STREQUAL "")
  # L1 1000 GB/s, DRAM 80 GB/s, FP32 FMA 539 GFLOP/s, at 1, 2 and 16 threads.
  set(roofs "")
  foreach(t 1 2 16)
    string(APPEND roofs
      "{\"name\": \"L1 load bandwidth\", \"kind\": \"bandwidth\", \"level\": \"L1\", \"value\": 1000, \"unit\": \"GB/s\", \"threads\": ${t}},"
      "{\"name\": \"DRAM triad bandwidth\", \"kind\": \"bandwidth\", \"level\": \"DRAM\", \"value\": 80, \"unit\": \"GB/s\", \"threads\": ${t}},"
      "{\"name\": \"FP32 FMA peak\", \"kind\": \"compute\", \"precision\": \"fp32\", \"value\": 539, \"unit\": \"GFLOP/s\", \"threads\": ${t}},")
  endforeach()
  string(REGEX REPLACE ",$" "" roofs "${roofs}")
  file(WRITE "${PROFILE}" "{\"version\": 1, \"fingerprint\": \"test\", \"target\": \"cpu\", \"measured_at\": \"2026-01-01T00:00:00Z\", \"roofs\": [${roofs}]}\n")
  list(APPEND extra --profile "${PROFILE}")
endif()
if(DEFINED MODE AND NOT MODE STREQUAL "")
  list(APPEND extra --mode ${MODE})
endif()
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=DISPLAY --unset=WAYLAND_DISPLAY --unset=QT_QPA_PLATFORM
          ${CLI} report ${MODEL} --target cpu --roofline ${OUT} --reps 3 ${extra}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tessera-cli report: exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXISTS "${OUT}")
  message(FATAL_ERROR "tessera-cli report: ${OUT} was not written\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(SIZE "${OUT}" size)
if(size LESS 1000)
  message(FATAL_ERROR "tessera-cli report: ${OUT} has only ${size} bytes")
endif()
file(READ "${OUT}" head LIMIT 8 HEX)
get_filename_component(ext "${OUT}" LAST_EXT)
if(ext STREQUAL ".png" AND NOT head STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "${OUT} is not a PNG (starts with ${head})")
elseif(ext STREQUAL ".pdf" AND NOT head MATCHES "^255044462d")
  message(FATAL_ERROR "${OUT} is not a PDF (starts with ${head})")
elseif(ext STREQUAL ".svg")
  file(READ "${OUT}" text LIMIT 4000)
  string(FIND "${text}" "<svg" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${OUT} has no <svg element")
  endif()
endif()
foreach(want "binding roof" "${STDOUT_HAS}")
  if(NOT want STREQUAL "")
    string(FIND "${out}" "${want}" pos)
    if(pos EQUAL -1)
      message(FATAL_ERROR "tessera-cli report: stdout lacks '${want}'\nstdout:\n${out}\nstderr:\n${err}")
    endif()
  endif()
endforeach()
