# Checks attention-relaxed.wasm after its link (CMakeLists.txt): valid with relaxed SIMD, its
# products use relaxed_madd, and it neither holds data nor touches the stack pointer (it shares
# the fast module's memory, where either would overwrite that module's bytes).
execute_process(COMMAND ${VALIDATE} --enable-relaxed-simd ${WASM} RESULT_VARIABLE invalid)
if(invalid)
  message(FATAL_ERROR "${WASM} is not valid WebAssembly with relaxed SIMD")
endif()
execute_process(COMMAND ${OBJDUMP} -d ${WASM} OUTPUT_VARIABLE code)
execute_process(COMMAND ${OBJDUMP} -h ${WASM} OUTPUT_VARIABLE sections)
if(NOT code MATCHES "f32x4.relaxed_madd" OR NOT code MATCHES "f64x2.relaxed_madd")
  message(FATAL_ERROR "${WASM}: no relaxed_madd in the products")
endif()
if(code MATCHES "global\\.(get|set)" OR sections MATCHES "Data")
  message(FATAL_ERROR "${WASM} uses a global or holds data: it would write into the shared memory")
endif()
