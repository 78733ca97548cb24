# hyloop_add_kind(NAME <name> SOURCES <file>... [DEPS <target>...] [OUTPUT_DIRECTORY <dir>])
# Builds a kind plug-in: the shared module hyloop_kind_<name>.so, which exports only
# hyloop_kind_plugin() (HYLOOP_KIND_PLUGIN in one of its sources; kind_plugin.hpp) and carries
# its own copy of hyloop's framework (linked from hyloop::experiment). hyloop and the services
# load it from the kind search path: <prefix>/lib/hyloop/kinds, HYLOOP_KIND_PATH, --kinds DIR.
# The same function serves hyloop's own tree and a lab's project (find_package(hyloop)).
set(_HYLOOP_KIND_MAP ${CMAKE_CURRENT_LIST_DIR}/hyloop_kind.map)
function(hyloop_add_kind)
  cmake_parse_arguments(ARG "" "NAME;OUTPUT_DIRECTORY" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_NAME MATCHES "^[a-z][a-z0-9_]*$")
    message(FATAL_ERROR "hyloop_add_kind: NAME '${ARG_NAME}' must match [a-z][a-z0-9_]*")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "hyloop_add_kind(${ARG_NAME}): no SOURCES")
  endif()
  set(target hyloop_kind_${ARG_NAME})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE hyloop::experiment ${ARG_DEPS})
  target_compile_features(${target} PRIVATE cxx_std_20)
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${target}
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                        LINK_DEPENDS ${_HYLOOP_KIND_MAP})
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_HYLOOP_KIND_MAP}")
  if(ARG_OUTPUT_DIRECTORY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  endif()
endfunction()
