include(GoogleTest)

# hyloop_add_tests(<lib> [DEPS ...]): one test binary per libs/<lib>/test/*_test.cpp directory.
function(hyloop_add_tests lib)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test/*_test.cpp)
  if(NOT tests)
    return()
  endif()
  add_executable(${lib}_test ${tests})
  target_link_libraries(${lib}_test PRIVATE hyloop::${lib} hyloop::test_support ${ARG_DEPS}
                        GTest::gtest_main GTest::gmock hyloop::warnings)
  gtest_discover_tests(${lib}_test WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       PROPERTIES LABELS ${lib} DISCOVERY_TIMEOUT 60)
endfunction()
