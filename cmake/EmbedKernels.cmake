# embed_kernels(<output.cpp> <files...>): generate a C++ source holding every kernel file as a
# string, looked up by file name through torch_ocl::embedded_kernel(name). Long files are split
# into chunks to stay below compilers' string literal limits.
function(embed_kernels output)
  set(files ${ARGN})
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} "-DFILES=${files_arg}"
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedKernelsScript.cmake
    DEPENDS ${files} ${CMAKE_SOURCE_DIR}/cmake/EmbedKernelsScript.cmake
    COMMENT "Embedding OpenCL kernels"
    VERBATIM)
endfunction()
