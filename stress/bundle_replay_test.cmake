# ctest stress.bundle_replay: a forced failure (a tiny --steps-max) writes
# a failure bundle per failing seed; the bundle is JSON (python3 -m json.tool, and CMake's own
# parser); --replay on it fails again with the same trace hash; a bundle of another commit still
# replays, with a warning; a bundle with stalls replays them; a broken bundle is a clear error (exit 2); the JSON and Markdown
# summaries list every failing seed and its bundle; a seed's Chrome trace is JSON with one track
# per thread.
#   cmake -DSTRESS=<readyport-stress> -DWORK=<dir> [-DPYTHON=<python3>] -P bundle_replay_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# run(<out var> <rc var> args...): the driver in WORK, its stdout and stderr together.
function(run out_var rc_var)
  execute_process(COMMAND "${STRESS}" ${ARGN} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}${err}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
endfunction()

# json_ok(<file>): the file parses, with CMake and (when found) python3 -m json.tool.
function(json_ok file)
  file(READ "${file}" text)
  string(JSON type ERROR_VARIABLE error TYPE "${text}")
  if(error OR NOT type STREQUAL "OBJECT")
    message(FATAL_ERROR "${file} is not a JSON object: ${error}")
  endif()
  if(PYTHON)
    execute_process(COMMAND "${PYTHON}" -m json.tool "${file}" RESULT_VARIABLE rc
                    OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "python3 -m json.tool ${file}: ${err}")
    endif()
  endif()
endfunction()

# 1. The forced failure: two seeds, both fail at the step limit.
run(out rc --seeds 2 --first-seed 5 --steps-max 1000 --corpus none --bundle-dir bundles
           --json summary.json --markdown summary.md)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "a run at a tiny --steps-max should fail with exit 1, got ${rc}:\n${out}")
endif()
foreach(seed 5 6)
  if(NOT EXISTS "${WORK}/bundles/seed-${seed}.json")
    message(FATAL_ERROR "no bundle for failing seed ${seed}:\n${out}")
  endif()
  if(NOT out MATCHES "bundle +seed ${seed} [^\n]*: bundles/seed-${seed}.json")
    message(FATAL_ERROR "the summary does not list seed ${seed}'s bundle:\n${out}")
  endif()
  json_ok("${WORK}/bundles/seed-${seed}.json")
endforeach()
if(NOT out MATCHES "failing seeds +5 6\n")
  message(FATAL_ERROR "the summary does not list every failing seed:\n${out}")
endif()

# 2. The replay: the same failure, the same trace hash.
file(READ "${WORK}/bundles/seed-5.json" bundle)
string(JSON hash GET "${bundle}" trace hash)
if(NOT hash MATCHES "^[0-9a-f]+$")
  message(FATAL_ERROR "the bundle's trace hash is '${hash}'")
endif()
run(out rc --replay bundles/seed-5.json)
if(NOT rc EQUAL 0 OR NOT out MATCHES "trace hash: ${hash} \\(recorded ${hash}: matches\\)"
   OR NOT out MATCHES "replay: reproduced exactly")
  message(FATAL_ERROR "--replay should fail again with hash ${hash}, exit 0 (exit ${rc}):\n${out}")
endif()
if(out MATCHES "warning: the bundle was written by commit")
  message(FATAL_ERROR "a bundle of this very build warns about its commit:\n${out}")
endif()
message(STATUS "replayed seed 5: trace hash ${hash} matches")

# 2b. Stalls (a thread kept off the CPU, sim_stall.hpp) are part of the schedule: seed 5 with two
# fails at the same limit, another trace; its bundle carries them and replays exactly.
run(out rc --seed 5 --steps-max 1000 --stalls 300:64,200:500 --corpus none
           --bundle-dir stalled)
if(NOT rc EQUAL 1 OR NOT EXISTS "${WORK}/stalled/seed-5.json")
  message(FATAL_ERROR "seed 5 with stalls should fail at the step limit (exit ${rc}):\n${out}")
endif()
file(READ "${WORK}/stalled/seed-5.json" stalled)
string(JSON stalls GET "${stalled}" options stalls)
string(JSON stalled_hash GET "${stalled}" trace hash)
if(NOT stalls STREQUAL "200:500,300:64" OR stalled_hash STREQUAL hash)
  message(FATAL_ERROR "the stalled bundle: stalls '${stalls}', hash ${stalled_hash} (unstalled ${hash})")
endif()
run(out rc --replay stalled/seed-5.json)
if(NOT rc EQUAL 0 OR NOT out MATCHES "recorded ${stalled_hash}: matches"
   OR NOT out MATCHES "replay: reproduced exactly" OR NOT out MATCHES "--stalls 200:500,300:64")
  message(FATAL_ERROR "the stalled bundle should replay exactly, its command with its stalls "
                      "(exit ${rc}):\n${out}")
endif()
run(out rc --seed 5 --runtime free --stalls 300:64 --corpus none)
if(NOT rc EQUAL 2 OR NOT out MATCHES "--stalls: the simulation's schedule only")
  message(FATAL_ERROR "--stalls on real threads should be refused (exit ${rc}):\n${out}")
endif()
message(STATUS "replayed seed 5 with stalls 200:500,300:64: trace hash ${stalled_hash} matches")

# 3. Another commit: a warning, and the replay goes on.
string(JSON other SET "${bundle}" readyport commit "\"000000000000\"")
file(WRITE "${WORK}/other-commit.json" "${other}")
run(out rc --replay other-commit.json)
if(NOT rc EQUAL 0 OR NOT out MATCHES "warning: the bundle was written by commit 000000000000"
   OR NOT out MATCHES "recorded ${hash}: matches")
  message(FATAL_ERROR "a bundle of another commit should warn and replay (exit ${rc}):\n${out}")
endif()

# 4. The same bundle with room to finish: it passes now, so the failure is not reproduced
# (exit 4), and the hash differs.
string(JSON roomy SET "${bundle}" options steps_max 2000000)
file(WRITE "${WORK}/roomy.json" "${roomy}")
run(out rc --replay roomy.json)
if(NOT rc EQUAL 4 OR NOT out MATCHES "verdict: ok" OR NOT out MATCHES "DIFFERS"
   OR NOT out MATCHES "replay: NOT reproduced")
  message(FATAL_ERROR "the bundle with the default --steps-max should pass, exit 4 (exit ${rc}):\n${out}")
endif()
# 4b. The record's trace hash changed by one digit: the same verdict, another trace (exit 3).
string(SUBSTRING "${hash}" 1 -1 hash_rest)
string(SUBSTRING "${hash}" 0 1 hash_first)
if(hash_first STREQUAL "0")
  set(hash_first "1")
else()
  set(hash_first "0")
endif()
string(JSON rehashed SET "${bundle}" trace hash "\"${hash_first}${hash_rest}\"")
file(WRITE "${WORK}/rehashed.json" "${rehashed}")
run(out rc --replay rehashed.json)
if(NOT rc EQUAL 3 OR NOT out MATCHES "DIFFERS" OR NOT out MATCHES "the same verdict, another trace")
  message(FATAL_ERROR "a bundle whose recorded hash differs should exit 3 (exit ${rc}):\n${out}")
endif()

# 5. Broken bundles: exit 2 and the field named.
# refused(<file> <text> <pattern> <what>): --replay of <text> written to <file> exits 2 and
# its message matches <pattern>.
function(refused file text pattern what)
  file(WRITE "${WORK}/${file}" "${text}")
  run(out rc --replay ${file})
  if(NOT rc EQUAL 2 OR NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "${what} should be refused (exit ${rc}):\n${out}")
  endif()
endfunction()
string(JSON broken REMOVE "${bundle}" seed)
refused(no-seed.json "${broken}" "no-seed.json.seed: missing" "a bundle without its seed")
string(JSON broken SET "${bundle}" options pct_depth "\"three\"")
refused(bad-depth.json "${broken}" "bad-depth.json.options.pct_depth: expected a whole number"
        "a bundle with a string depth")
string(JSON broken SET "${stalled}" options stalls "\"300:0\"")
refused(bad-stalls.json "${broken}" "bad-stalls.json.options.stalls: stalls: bad token '300:0'"
        "a bundle with a stall of 0 steps")
file(WRITE "${WORK}/not-json.json" "{\"format\": ")
run(out rc --replay not-json.json)
if(NOT rc EQUAL 2 OR NOT out MATCHES "not valid JSON")
  message(FATAL_ERROR "a file that is not JSON should be refused (exit ${rc}):\n${out}")
endif()

# 6. The summaries.
json_ok("${WORK}/summary.json")
file(READ "${WORK}/summary.json" summary)
string(JSON failures LENGTH "${summary}" failures)
string(JSON second GET "${summary}" failures 1 bundle)
string(JSON commit GET "${summary}" readyport commit)
if(NOT failures EQUAL 2 OR NOT second STREQUAL "bundles/seed-6.json" OR commit STREQUAL "")
  message(FATAL_ERROR "summary.json: ${failures} failures, second bundle '${second}':\n${summary}")
endif()
file(READ "${WORK}/summary.md" markdown)
if(NOT markdown MATCHES "\\| 1/1 \\| 5 \\| 2 of 2 \\(0 passed, 2 failed, 0 cut short\\) \\| 2 \\| 5 [^|]*`seed-5.json`[^|]*6 [^|]*`seed-6.json`")
  message(FATAL_ERROR "summary.md lacks the table row:\n${markdown}")
endif()

# 7. A seed's trace as Chrome trace-event JSON: one track (thread_name) per thread.
run(out rc --seed 5 --trace-out s5.chrome.json --trace-format chrome)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--trace-format chrome failed (exit ${rc}):\n${out}")
endif()
json_ok("${WORK}/s5.chrome.json")
file(READ "${WORK}/s5.chrome.json" chrome)
string(JSON events LENGTH "${chrome}" traceEvents)
set(tracks 0)
math(EXPR last "${events} - 1")
# The metadata events come last: look at the tail only (the document is large).
math(EXPR first "${events} - 64")
if(first LESS 0)
  set(first 0)
endif()
foreach(i RANGE ${first} ${last})
  string(JSON name GET "${chrome}" traceEvents ${i} name)
  if(name STREQUAL "thread_name")
    math(EXPR tracks "${tracks} + 1")
  endif()
endforeach()
if(tracks LESS 3)
  message(FATAL_ERROR "the Chrome trace has ${tracks} thread tracks among ${events} events")
endif()
message(STATUS "Chrome trace of seed 5: ${events} events, ${tracks} thread tracks")
