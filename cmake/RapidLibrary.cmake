# rapid_library(NAME SOURCES ... [DEPS ...]): one static library per pipeline
# stage, with the public headers of compiler/include and runtime/include.
function(rapid_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    ${PROJECT_SOURCE_DIR}/compiler/include ${PROJECT_SOURCE_DIR}/runtime/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()
