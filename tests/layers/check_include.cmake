# One case of the layer test (tests/CMakeLists.txt, cmake/layers.cmake): compiles a file that
# includes HEADER with the include directories of a library and checks the outcome.
#   cmake -DCXX=compiler -DDIRS="dir|dir|..." -DHEADER=sim/graph.h -DEXPECT=found|missing
#         -DWORK=scratch-dir -P check_include.cmake
# EXPECT=found: the compile must succeed.  EXPECT=missing: it must fail because HEADER is not
# found (any other error fails the case, so the test cannot pass by accident).
foreach(v CXX DIRS HEADER EXPECT WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_include.cmake: -D${v}=... missing")
  endif()
endforeach()
string(REPLACE "|" ";" dirs "${DIRS}")
set(flags)
foreach(d IN LISTS dirs)
  if(d)
    list(APPEND flags "-I${d}")
  endif()
endforeach()
string(MAKE_C_IDENTIFIER "${HEADER}" name)
file(MAKE_DIRECTORY ${WORK})
set(src ${WORK}/${name}.cc)
file(WRITE ${src} "#include \"${HEADER}\"\nint main() { return 0; }\n")
execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only ${flags} ${src}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REPLACE "|" "\n  " shown "${DIRS}")
if(EXPECT STREQUAL "found")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${HEADER} should compile with these include directories:\n  ${shown}\n"
                        "but did not:\n${out}")
  endif()
  message(STATUS "ok: ${HEADER} is found")
elseif(EXPECT STREQUAL "missing")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${HEADER} should not be found with these include directories:\n"
                        "  ${shown}\nbut it compiled")
  endif()
  # GCC: "HEADER: No such file or directory"; clang: "'HEADER' file not found".
  string(FIND "${out}" "${HEADER}" at)
  if(at EQUAL -1 OR NOT out MATCHES "No such file or directory|file not found")
    message(FATAL_ERROR "${HEADER} should fail as not found, but failed otherwise:\n${out}")
  endif()
  message(STATUS "ok: ${HEADER} is not found, as it should be")
else()
  message(FATAL_ERROR "check_include.cmake: EXPECT must be found or missing, not ${EXPECT}")
endif()
