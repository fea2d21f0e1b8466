# cmake -DBUILT=<file> -DCHECKED_IN=<file> -P CompareDoc.cmake
# Fails when the checked-in generated page differs from the freshly built one.
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${BUILT} ${CHECKED_IN}
  RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "${CHECKED_IN} is stale or missing: run "
    "`ninja -C build ober-docs-update` and commit the result.")
endif()
