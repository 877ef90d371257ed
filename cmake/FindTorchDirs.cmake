# Locate torch through its include and library directories rather than find_package(Torch):
# the latter demands a CUDA toolkit on CUDA builds of torch and links libtorch_cuda.
if(NOT Python_EXECUTABLE)
  find_package(Python COMPONENTS Interpreter REQUIRED)
endif()
execute_process(
  COMMAND ${Python_EXECUTABLE} -c
    "import os, torch; print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0])"
  OUTPUT_VARIABLE _torch_info OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _torch_rc)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR "torch is not importable by ${Python_EXECUTABLE}; install torch first and "
    "build with --no-build-isolation, or let the build environment install it.")
endif()
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 TORCH_ROOT)
list(GET _torch_info 1 TORCH_VERSION)
string(REGEX MATCH "^[0-9]+\\.[0-9]+" TORCH_MINOR_VERSION "${TORCH_VERSION}")
set(TORCH_INCLUDE_DIRS ${TORCH_ROOT}/include ${TORCH_ROOT}/include/torch/csrc/api/include)
set(_torch_libs)
foreach(_lib torch torch_cpu c10)
  find_library(_torch_lib_${_lib} NAMES ${_lib} PATHS ${TORCH_ROOT}/lib NO_DEFAULT_PATH REQUIRED)
  list(APPEND _torch_libs ${_torch_lib_${_lib}})
endforeach()
set(TORCH_LIBRARIES ${_torch_libs})
message(STATUS "torch ${TORCH_VERSION} at ${TORCH_ROOT}")
