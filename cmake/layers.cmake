# Which folders each library's code may include (docs/ARCHITECTURE.md's table).  A library
# does not get the source root as an include directory: placeto_layer(TARGET FOLDER) makes
# ${CMAKE_BINARY_DIR}/include/FOLDER/, holding one symbolic link per folder that FOLDER may
# use (named like the source folder, so `#include "sim/graph.h"` is spelled as before), and
# makes that directory a PUBLIC include directory of TARGET.  A header of a folder that is not
# listed is then not found, and the compile fails.  A dependent library sees the folders of
# its dependencies, which it may use anyway, plus its own.  launch/ and tests/ see the whole
# source root.  tests/layers/ checks that a forbidden include fails (ctest -R layer_).
#
# A folder listed but missing from the source tree gets a dangling link: nothing is found
# through it until the folder exists.

set(PLACETO_LAYER_common common)
set(PLACETO_LAYER_training common training)
set(PLACETO_LAYER_sim common sim)
set(PLACETO_LAYER_improve common training sim improve)
set(PLACETO_LAYER_actors common training sim actors)
set(PLACETO_LAYER_profiler common sim profiler)
set(PLACETO_LAYER_learner common training sim improve actors learner)

# placeto_layer(TARGET FOLDER): TARGET's code lives in FOLDER/ and may include the folders
# PLACETO_LAYER_<FOLDER> lists.
function(placeto_layer target folder)
  if(NOT DEFINED PLACETO_LAYER_${folder})
    message(FATAL_ERROR "placeto_layer: no PLACETO_LAYER_${folder} in cmake/layers.cmake")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/include/${folder})
  # Made afresh at each configure: links of a folder since dropped from the list go.
  file(REMOVE_RECURSE ${dir})
  file(MAKE_DIRECTORY ${dir})
  foreach(used IN LISTS PLACETO_LAYER_${folder})
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${used} ${dir}/${used} SYMBOLIC)
  endforeach()
  target_include_directories(${target} PUBLIC ${dir})
endfunction()
