# trainscope_test(NAME SOURCES a.cc b.cc LIBS lib... LABELS unit [privileged])
# One GoogleTest executable whose cases ctest discovers one by one. Tests
# labelled "privileged" touch the real kernel (cgroups, netns, BPF) and run
# serially so they never race each other for the same kernel objects.
include(GoogleTest)
find_package(GTest REQUIRED)

function(trainscope_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock
                                        GTest::gtest_main)
  target_compile_definitions(
    ${name} PRIVATE TRAINSCOPE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                    TRAINSCOPE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  # A test that judges time or memory use skips under TSan (5-15x slower,
  # its own allocator): there it would judge the sanitizer, not the code.
  if(TRAINSCOPE_SANITIZE MATCHES "thread")
    target_compile_definitions(${name} PRIVATE TRAINSCOPE_TEST_UNDER_TSAN=1)
  endif()
  # ASan and TSan replace glibc's malloc (whose own figures then say little).
  if(TRAINSCOPE_SANITIZE MATCHES "address|thread")
    target_compile_definitions(${name} PRIVATE
                               TRAINSCOPE_TEST_SANITIZER_ALLOCATOR=1)
  endif()
  set(props TIMEOUT ${T_TIMEOUT})
  if("privileged" IN_LIST T_LABELS)
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
  # gtest_discover_tests flattens list-valued properties, so a test with two
  # labels would keep one. Set the labels from a file ctest includes after
  # the discovered tests (it defines ${name}_TESTS).
  set(label_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${label_file}
       "if(${name}_TESTS)\n"
       "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${T_LABELS}\")\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${label_file})
endfunction()
