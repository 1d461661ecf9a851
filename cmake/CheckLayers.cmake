# Checks the include graph against the layer order (CTest test `layers`, label `layers`):
#   cmake -DTESSERA_SOURCE_DIR=<repository root> -P cmake/CheckLayers.cmake
# Fails, naming file:line and both layers, for
# - an `#include "core/..."` in core/ that reaches a layer its own layer does not link, directly or
#   through the layers below it (cmake/TesseraLayers.cmake), or a core/ folder in no layer;
# - an `#include` in app/gui or app/cli of core/frontend, core/eval, core/lower, core/codegen or
#   core/runtime: the apps reach those through core/pipeline and core/project. The files listed in
#   TESSERA_APP_LAYER_EXCEPTIONS below are exempt; a listed file that no longer needs it is named
#   so that the list can shrink.
cmake_minimum_required(VERSION 3.25)
if(NOT TESSERA_SOURCE_DIR)
  message(FATAL_ERROR "usage: cmake -DTESSERA_SOURCE_DIR=<repository root> -P CheckLayers.cmake")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/TesseraLayers.cmake)

# Files of app/ that still include a core layer the apps should reach through pipeline or project.
set(TESSERA_APP_LAYER_EXCEPTIONS
  app/cli/conformance_cmd.cpp
  app/cli/project_cmd.cpp
  app/cli/roofline_cmd.cpp
  app/cli/run_cmd.cpp
  app/gui/main_window_program.cpp
  app/gui/run_session.cpp
  app/gui/run_targets.h
  app/gui/schedule_controller.cpp)
set(app_forbidden frontend eval lower codegen runtime)

# Layer table: folder of each library, and what each library links.
set(folders "")
foreach(entry IN LISTS TESSERA_CORE_LAYERS)
  string(REPLACE " " ";" fields "${entry}")
  list(POP_FRONT fields lib folder)
  set(folder_of_${lib} ${folder})
  set(links_of_${lib} ${fields})
  set(lib_of_${folder} ${lib})
  list(APPEND folders ${folder})
endforeach()
# Folders each layer may include: its own and those of every library it links, transitively.
foreach(entry IN LISTS TESSERA_CORE_LAYERS)
  string(REPLACE " " ";" fields "${entry}")
  list(GET fields 0 lib)
  set(seen ${lib})
  set(todo ${links_of_${lib}})
  while(todo)
    list(POP_FRONT todo dep)
    if(NOT dep IN_LIST seen)
      list(APPEND seen ${dep})
      list(APPEND todo ${links_of_${dep}})
    endif()
  endwhile()
  set(allowed_${lib} "")
  foreach(dep IN LISTS seen)
    list(APPEND allowed_${lib} ${folder_of_${dep}})
  endforeach()
endforeach()

# The layer folder holding `path` (relative to core/): the longest folder that prefixes it.
function(layer_folder path out)
  set(best "")
  foreach(folder IN LISTS folders)
    string(LENGTH "${folder}" n)
    string(LENGTH "${best}" bn)
    string(SUBSTRING "${path}/" 0 ${n} head)
    if(head STREQUAL folder AND n GREATER bn)
      string(SUBSTRING "${path}/" ${n} 1 next)
      if(next STREQUAL "/")
        set(best ${folder})
      endif()
    endif()
  endforeach()
  set(${out} "${best}" PARENT_SCOPE)
endfunction()

# 1-based line of the first line of `file` equal to `text`.
function(line_of file text out)
  file(READ ${file} content)
  string(FIND "${content}" "${text}" at)
  set(line 0)
  if(at GREATER_EQUAL 0)
    string(SUBSTRING "${content}" 0 ${at} before)
    string(REGEX MATCHALL "\n" newlines "${before}")
    list(LENGTH newlines line)
  endif()
  math(EXPR line "${line} + 1")
  set(${out} ${line} PARENT_SCOPE)
endfunction()

set(include_regex "^[ \t]*#[ \t]*include[ \t]*\"core/[^\"]*\"")
set(problems "")

file(GLOB_RECURSE core_files RELATIVE ${TESSERA_SOURCE_DIR}/core
  ${TESSERA_SOURCE_DIR}/core/*.h ${TESSERA_SOURCE_DIR}/core/*.hpp ${TESSERA_SOURCE_DIR}/core/*.cpp
  ${TESSERA_SOURCE_DIR}/core/*.inc)
list(SORT core_files)
foreach(rel IN LISTS core_files)
  get_filename_component(dir ${rel} DIRECTORY)
  layer_folder("${dir}" src)
  if(NOT src)
    list(APPEND problems "core/${rel}: in no layer of cmake/TesseraLayers.cmake")
    continue()
  endif()
  set(lib ${lib_of_${src}})
  file(STRINGS ${TESSERA_SOURCE_DIR}/core/${rel} includes REGEX "${include_regex}")
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE ".*\"core/([^\"]*)\".*" "\\1" target "${inc}")
    get_filename_component(target_dir ${target} DIRECTORY)
    layer_folder("${target_dir}" dst)
    if(NOT dst OR NOT dst IN_LIST allowed_${lib})
      line_of(${TESSERA_SOURCE_DIR}/core/${rel} "${inc}" line)
      if(dst)
        set(why "layer ${src} (${lib}) does not link ${dst} (${lib_of_${dst}})")
      else()
        set(why "core/${target_dir} is in no layer")
      endif()
      list(APPEND problems "core/${rel}:${line}: includes core/${target}: ${why}")
    endif()
  endforeach()
endforeach()

file(GLOB_RECURSE app_files RELATIVE ${TESSERA_SOURCE_DIR}
  ${TESSERA_SOURCE_DIR}/app/gui/*.h ${TESSERA_SOURCE_DIR}/app/gui/*.cpp
  ${TESSERA_SOURCE_DIR}/app/cli/*.h ${TESSERA_SOURCE_DIR}/app/cli/*.cpp)
list(SORT app_files)
set(stale_exceptions ${TESSERA_APP_LAYER_EXCEPTIONS})
foreach(rel IN LISTS app_files)
  file(STRINGS ${TESSERA_SOURCE_DIR}/${rel} includes REGEX "${include_regex}")
  foreach(inc IN LISTS includes)
    string(REGEX REPLACE ".*\"core/([^\"]*)\".*" "\\1" target "${inc}")
    get_filename_component(target_dir ${target} DIRECTORY)
    string(REGEX REPLACE "/.*" "" top "${target_dir}")
    if(top IN_LIST app_forbidden)
      if(rel IN_LIST TESSERA_APP_LAYER_EXCEPTIONS)
        list(REMOVE_ITEM stale_exceptions ${rel})
      else()
        line_of(${TESSERA_SOURCE_DIR}/${rel} "${inc}" line)
        list(APPEND problems
          "${rel}:${line}: includes core/${target}: app/ reaches core/${top} through core/pipeline or core/project")
      endif()
    endif()
  endforeach()
endforeach()
foreach(rel IN LISTS stale_exceptions)
  message(STATUS "${rel} no longer includes core/frontend, eval, lower, codegen or runtime: drop it from TESSERA_APP_LAYER_EXCEPTIONS")
endforeach()

if(problems)
  foreach(problem IN LISTS problems)
    message("${problem}")
  endforeach()
  list(LENGTH problems n)
  message(FATAL_ERROR "${n} include(s) against the layer order (cmake/TesseraLayers.cmake)")
endif()
list(LENGTH core_files n)
message(STATUS "layers: ${n} files of core/ and the includes of app/gui, app/cli follow the layer order")
