# hyloop_add_fuzzer(NAME <name> SOURCES ... DEPS ...): the fuzz target tests/fuzz/<name> as
# executable fuzz_<name> (docs/reliability.md, "Fuzzing and sanitizers").
#   HYLOOP_FUZZ=ON (clang, the sanitizer build of scripts/fuzz.sh and scripts/sanitize.sh): linked
#     with libFuzzer's main, run by fuzz.sh on its corpus tests/fuzz/corpus/<name>/ (with
#     tests/fuzz/<name>.dict when present); ctest `fuzz_replay_<name>` runs it once over that
#     corpus (-runs=0) under ASan+UBSan.
#   otherwise, with the tests: linked with replay_main.cpp, and the ctest `fuzz_replay_<name>`
#     (label fuzz) runs it once on every file of the committed corpus, so the normal build keeps
#     the target compiling and replays the corpus.
function(hyloop_add_fuzzer)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  set(target fuzz_${ARG_NAME})
  set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${ARG_NAME})
  if(HYLOOP_FUZZ)
    add_executable(${target} ${ARG_SOURCES})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    if(HYLOOP_BUILD_TESTS)
      add_test(NAME fuzz_replay_${ARG_NAME} COMMAND ${target} -runs=0 ${corpus}
               WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      set_tests_properties(fuzz_replay_${ARG_NAME} PROPERTIES LABELS fuzz TIMEOUT 300)
    endif()
  elseif(HYLOOP_BUILD_TESTS)
    add_executable(${target} ${ARG_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/replay_main.cpp)
    add_test(NAME fuzz_replay_${ARG_NAME} COMMAND ${target} ${corpus}
             WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(fuzz_replay_${ARG_NAME} PROPERTIES LABELS fuzz TIMEOUT 300)
  else()
    return()
  endif()
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE ${ARG_DEPS} hyloop::warnings)
endfunction()
