# Compiler warnings and sanitizers, applied through the interface target hyloop::warnings.
add_library(hyloop_warnings INTERFACE)
add_library(hyloop::warnings ALIAS hyloop_warnings)
set_target_properties(hyloop_warnings PROPERTIES EXPORT_NAME warnings)
target_compile_options(hyloop_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
if(HYLOOP_WERROR)
  target_compile_options(hyloop_warnings INTERFACE -Werror)
endif()

# HYLOOP_FUZZ: the libFuzzer targets of tests/fuzz (clang only, a build dir of its own:
# scripts/fuzz.sh). Every object is built with ASan+UBSan and libFuzzer's coverage
# instrumentation; the fuzz executables link libFuzzer's main (cmake/HyloopFuzz.cmake).
option(HYLOOP_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)
if(HYLOOP_FUZZ AND HYLOOP_SANITIZE)
  message(FATAL_ERROR "HYLOOP_FUZZ already builds with ASan+UBSan: leave HYLOOP_SANITIZE off")
endif()
if(HYLOOP_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "HYLOOP_FUZZ needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                      "configure with -DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does)")
endif()

# Sanitizers for the whole build (scripts/sanitize.sh). UBSan does not recover: the first
# undefined behaviour aborts the test, as ASan does.
if(HYLOOP_SANITIZE OR HYLOOP_FUZZ)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # gcc 12's flow analysis of instrumented code reports std::regex/std::function members as
    # maybe-uninitialized (a false positive: the same code is clean without -fsanitize).
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
endif()
if(HYLOOP_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# HYLOOP_UNITY: the libraries, service components and the hyloop tool compile as unity batches
# (CMake UNITY_BUILD, 8 sources per batch): each batch parses the Eigen, gRPC, protobuf and
# yaml-cpp headers and instantiates their templates once, not once per file, which cuts a clean
# build's CPU time (docs/reliability.md, "Times"). Their sources must not define the same name at
# namespace scope (the anonymous namespace included). Tests compile file by file.
option(HYLOOP_UNITY "Compile libraries, services and apps as unity batches" ON)
function(hyloop_unity target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${HYLOOP_UNITY} UNITY_BUILD_BATCH_SIZE 8)
endfunction()

# A library that kind plug-ins (shared modules, cmake/HyloopKind.cmake) link: position
# independent, and without semantic interposition, so that -fPIC keeps the inlining of the
# executables' -fPIE build (a kind plug-in exports only its entry point anyway).
function(hyloop_plugin_ready target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_compile_options(${target} PRIVATE -fno-semantic-interposition)
  endif()
endfunction()

# hyloop_add_library(NAME <name> [DEPS ...] [PRIVATE_DEPS ...])
# Builds libs/<name>: include/ is public, src/*.cpp the sources, hyloop::<name> the alias.
function(hyloop_add_library)
  cmake_parse_arguments(ARG "" "NAME" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  add_library(hyloop_${ARG_NAME} STATIC ${sources})
  add_library(hyloop::${ARG_NAME} ALIAS hyloop_${ARG_NAME})
  target_include_directories(hyloop_${ARG_NAME} PUBLIC
                             $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(hyloop_${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE hyloop::warnings ${ARG_PRIVATE_DEPS})
  target_compile_features(hyloop_${ARG_NAME} PUBLIC cxx_std_20)
  hyloop_plugin_ready(hyloop_${ARG_NAME})
  set_target_properties(hyloop_${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_NAME})
  hyloop_unity(hyloop_${ARG_NAME})
endfunction()
