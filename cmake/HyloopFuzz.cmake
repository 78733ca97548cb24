# hyloop_add_fuzzer(NAME <name> SOURCES ... DEPS ...): the fuzz target tests/fuzz/<name> as
# executable fuzz_<name> (docs/reliability.md, "Fuzzing and sanitizers").
#   HYLOOP_FUZZ=ON (clang, scripts/fuzz.sh): linked with libFuzzer's main, run by fuzz.sh on its
#     corpus tests/fuzz/corpus/<name>/ (with tests/fuzz/<name>.dict when present).
#   otherwise, with the tests: linked with replay_main.cpp, and the ctest `fuzz_replay_<name>`
#     (label fuzz) runs it once on every file of the committed corpus, so the normal build keeps
#     the target compiling and the sanitizer build replays the corpus under ASan+UBSan.
function(hyloop_add_fuzzer)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  set(target fuzz_${ARG_NAME})
  set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${ARG_NAME})
  if(HYLOOP_FUZZ)
    add_executable(${target} ${ARG_SOURCES})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
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
