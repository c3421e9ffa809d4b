# oxidize_relaxed_variant(TARGET): next to TARGET's NAME.wasm, a NAME.relaxed.wasm whose slot
# functions (kernels/simd128/relaxed_slots.h) run the hand-written relaxed-SIMD bodies of
# kernels/simd128/relaxed/*.wat, assembled by wabt's wat2wasm (this toolchain's clang 14 cannot
# emit relaxed SIMD). wasm/relaxed_select.js (a pre-js) or the web worker loads the relaxed copy
# where the engine validates relaxed SIMD. The link keeps function names (--profiling-funcs) so
# wasm/tools/splice_relaxed.mjs can find the slots; the splice then drops them from both copies.
find_program(OXIDIZE_WAT2WASM wat2wasm REQUIRED)
find_program(OXIDIZE_NODE node REQUIRED)
# node 20 validates relaxed SIMD only behind a flag (a later node without the flag would refuse it).
execute_process(COMMAND ${OXIDIZE_NODE} --experimental-wasm-relaxed-simd -e "" RESULT_VARIABLE no_flag
                OUTPUT_QUIET ERROR_QUIET)
if(no_flag EQUAL 0)
  set(OXIDIZE_NODE_RELAXED_FLAG --experimental-wasm-relaxed-simd)
else()
  set(OXIDIZE_NODE_RELAXED_FLAG "")
endif()
# The slots are the .wat files: kernels/simd128/relaxed/NAME.wat is the body of the C++ function
# ox_simd128_NAME (relaxed_slots.h); adding a body is adding its file. A body whose function is
# missing stops the splice with an error naming it.
file(GLOB OXIDIZE_RELAXED_WATS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernels/simd128/relaxed/*.wat)
set(OXIDIZE_RELAXED_SLOTS "")
foreach(wat ${OXIDIZE_RELAXED_WATS})
  get_filename_component(wat_name ${wat} NAME_WE)
  list(APPEND OXIDIZE_RELAXED_SLOTS ${wat_name}=ox_simd128_${wat_name})
endforeach()
set(OXIDIZE_RELAXED_WASMS "")
set(OXIDIZE_RELAXED_SPLICE_ARGS "")
foreach(slot ${OXIDIZE_RELAXED_SLOTS})
  string(REPLACE "=" ";" parts ${slot})
  list(GET parts 0 wat_name)
  list(GET parts 1 function_name)
  set(wat ${CMAKE_SOURCE_DIR}/kernels/simd128/relaxed/${wat_name}.wat)
  set(out ${CMAKE_BINARY_DIR}/relaxed/${wat_name}.wasm)
  add_custom_command(OUTPUT ${out} COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/relaxed
                     COMMAND ${OXIDIZE_WAT2WASM} --enable-relaxed-simd --enable-threads ${wat} -o ${out}
                     DEPENDS ${wat} COMMENT "wat2wasm ${wat_name}.wat")
  list(APPEND OXIDIZE_RELAXED_WASMS ${out})
  list(APPEND OXIDIZE_RELAXED_SPLICE_ARGS ${function_name}=${out})
endforeach()
add_custom_target(ox_relaxed_bodies DEPENDS ${OXIDIZE_RELAXED_WASMS})

function(oxidize_relaxed_variant target)
  add_dependencies(${target} ox_relaxed_bodies)
  # SHELL: keeps the pair together (CMake drops a repeated --pre-js as a duplicate option)
  target_link_options(${target} PRIVATE --profiling-funcs "SHELL:--pre-js ${CMAKE_SOURCE_DIR}/wasm/relaxed_select.js")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${CMAKE_SOURCE_DIR}/wasm/relaxed_select.js
               ${OXIDIZE_RELAXED_WASMS} ${CMAKE_SOURCE_DIR}/wasm/tools/splice_relaxed.mjs)
  # TARGET_FILE is NAME.js / NAME.cjs; the module beside it is NAME.wasm.
  set(dir $<TARGET_FILE_DIR:${target}>)
  set(base ${dir}/$<TARGET_FILE_BASE_NAME:${target}>)
  add_custom_command(TARGET ${target} POST_BUILD
                     COMMAND ${OXIDIZE_NODE} ${CMAKE_SOURCE_DIR}/wasm/tools/splice_relaxed.mjs ${base}.wasm ${base}.wasm
                             ${base}.relaxed.wasm ${OXIDIZE_RELAXED_SPLICE_ARGS}
                     VERBATIM)
endfunction()
