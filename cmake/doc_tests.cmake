# Documentation tests (label "docs"), cmake -P scripts, run by every leg (cheap, no build).
# - docs.rule_ids: every rule ID used in a test name has a heading in docs/rules.md
#   (cmake/check_rule_ids.cmake).
# - docs.rule_ids_catches_a_missing_heading: the same check with the first used ID's heading
#   hidden must report that ID: a check that cannot fail would prove nothing.
add_test(NAME docs.rule_ids
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -P ${PROJECT_SOURCE_DIR}/cmake/check_rule_ids.cmake)
add_test(NAME docs.rule_ids_catches_a_missing_heading
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DDROP_HEADING=FIRST_USED
                 -P ${PROJECT_SOURCE_DIR}/cmake/check_rule_ids.cmake)
set_tests_properties(docs.rule_ids docs.rule_ids_catches_a_missing_heading PROPERTIES
                     LABELS "docs" TIMEOUT 60)
# The expected failure: its message names the hidden ID (the exit status is then not consulted).
set_tests_properties(docs.rule_ids_catches_a_missing_heading PROPERTIES
                     PASS_REGULAR_EXPRESSION
                     "rule [A-G][0-9]+: used in test names but has no heading in docs/rules.md")
# - docs.snippets and its _catches_ tests: tests/docs/CMakeLists.txt (a C++ checker that needs
#   the build's readyport-stress).
# - docs.paths: every repository path README, docs/ and the corpus README name (code spans and
#   link targets) exists (cmake/check_doc_paths.cmake); the _catches_ tests plant a missing one
#   and an unmatched '[' (which would hide the paths after it).
add_test(NAME docs.paths
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -P ${PROJECT_SOURCE_DIR}/cmake/check_doc_paths.cmake)
add_test(NAME docs.paths_catches_a_missing_file
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DPLANT=1
                 -P ${PROJECT_SOURCE_DIR}/cmake/check_doc_paths.cmake)
add_test(NAME docs.paths_catches_an_unmatched_bracket
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DPLANT=bracket
                 -P ${PROJECT_SOURCE_DIR}/cmake/check_doc_paths.cmake)
set_tests_properties(docs.paths docs.paths_catches_a_missing_file
                     docs.paths_catches_an_unmatched_bracket PROPERTIES LABELS "docs" TIMEOUT 60)
set_tests_properties(docs.paths_catches_an_unmatched_bracket PROPERTIES
                     PASS_REGULAR_EXPRESSION "README.md has more '\\[' than '\\]'")
set_tests_properties(docs.paths_catches_a_missing_file PROPERTIES
                     PASS_REGULAR_EXPRESSION "README.md: docs/no-such-file-planted.md")
