# Man pages and bash completions of the tools, made at build time from each
# tool's own --help (tools/docs/make_man.sh with help2man, make_completion.sh),
# so that they cannot drift from it; installed to share/man/man1 and
# share/bash-completion/completions, and so into the .deb. Without help2man
# (apt-get install help2man; tools/setup.sh installs it) the man pages are
# left out with a message; tests/docs checks what was made.
set(ASYNCRT_DOC_TOOLS asyncrt-run asyncrt-probe asyncrt-bench asyncrt-bundle asyncrt-cache)
find_program(ASYNCRT_HELP2MAN help2man)
find_program(ASYNCRT_PERL perl)
if(CMAKE_CROSSCOMPILING OR NOT ASYNCRT_PERL)
  message(STATUS "asyncrt: no man pages or completions (they run the tools, and need perl)")
  return()
endif()
if(NOT ASYNCRT_HELP2MAN)
  message(STATUS "asyncrt: help2man not found: the man pages are not built (apt-get install help2man)")
endif()
set(docs_dir ${CMAKE_CURRENT_LIST_DIR})
string(REPLACE ";" "," see_also "${ASYNCRT_DOC_TOOLS}")
set(outputs)
foreach(tool IN LISTS ASYNCRT_DOC_TOOLS)
  string(REPLACE "asyncrt-" "" folder ${tool})
  set(completion ${PROJECT_BINARY_DIR}/completions/${tool})
  add_custom_command(OUTPUT ${completion}
    COMMAND bash ${docs_dir}/make_completion.sh $<TARGET_FILE:${tool}> ${completion}
    DEPENDS ${tool} ${docs_dir}/make_completion.sh ${docs_dir}/help_options.pl
    COMMENT "Bash completion for ${tool} from its --help" VERBATIM)
  list(APPEND outputs ${completion})
  install(FILES ${completion} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  if(ASYNCRT_HELP2MAN)
    set(page ${PROJECT_BINARY_DIR}/man/man1/${tool}.1)
    set(include ${CMAKE_CURRENT_SOURCE_DIR}/${folder}/${tool}.h2m)
    add_custom_command(OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man/man1
      COMMAND bash ${docs_dir}/make_man.sh $<TARGET_FILE:${tool}> ${PROJECT_VERSION} ${page} ${include} ${see_also}
      DEPENDS ${tool} ${include} ${docs_dir}/make_man.sh ${docs_dir}/help_options.pl
      COMMENT "Man page for ${tool} from its --help" VERBATIM)
    list(APPEND outputs ${page})
    install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  endif()
endforeach()
add_custom_target(asyncrt_tool_docs ALL DEPENDS ${outputs})
# For tests/docs: which pages were made.
set_property(GLOBAL PROPERTY ASYNCRT_DOC_TOOLS ${ASYNCRT_DOC_TOOLS})
set_property(GLOBAL PROPERTY ASYNCRT_MAN_PAGES ${ASYNCRT_HELP2MAN})
