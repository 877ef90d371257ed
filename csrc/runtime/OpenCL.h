// The OpenCL 1.2 API that torch-ocl uses, declared from the OpenCL specification (the Khronos
// OpenCL API specification, "Appendix: Host API types, constants and functions"), so that no
// system OpenCL headers are needed to build: the library never links libOpenCL (the entry points
// are loaded at run time, runtime/OclApi.h), and these declarations are all it needs of the API.
//
// Only what the library (and its interop) uses is declared. The values are the specification's;
// ci/check_opencl_decls.py compares every constant, type and function signature here with the
// Khronos headers where they are installed (run by `nox -s lint`).
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(_WIN32)
#define CL_API_CALL __stdcall
#define CL_CALLBACK __stdcall
#else
#define CL_API_CALL
#define CL_CALLBACK
#endif

extern "C" {

// ---- scalar types ------------------------------------------------------------------------------
typedef int8_t cl_char;
typedef uint8_t cl_uchar;
typedef int16_t cl_short;
typedef uint16_t cl_ushort;
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef int64_t cl_long;
typedef uint64_t cl_ulong;
typedef uint16_t cl_half;
typedef float cl_float;
typedef double cl_double;

// Vector types as kernel arguments: the layout of OpenCL C's intN/longN (N elements, aligned to
// their size). Only the `s` array of the specification's unions is declared.
typedef union alignas(16) {
  cl_int s[4];
} cl_int4;
typedef union alignas(32) {
  cl_int s[8];
} cl_int8;
typedef union alignas(32) {
  cl_long s[4];
} cl_long4;
typedef union alignas(64) {
  cl_long s[8];
} cl_long8;

// ---- handles -----------------------------------------------------------------------------------
typedef struct _cl_platform_id* cl_platform_id;
typedef struct _cl_device_id* cl_device_id;
typedef struct _cl_context* cl_context;
typedef struct _cl_command_queue* cl_command_queue;
typedef struct _cl_mem* cl_mem;
typedef struct _cl_program* cl_program;
typedef struct _cl_kernel* cl_kernel;
typedef struct _cl_event* cl_event;

// ---- enumerations and bit fields ---------------------------------------------------------------
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_bitfield cl_device_fp_config;
typedef cl_bitfield cl_command_queue_properties;
typedef intptr_t cl_context_properties;
typedef cl_uint cl_context_info;
typedef cl_uint cl_command_queue_info;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_mem_migration_flags;
typedef cl_uint cl_mem_info;
typedef cl_uint cl_mem_object_type;
typedef cl_uint cl_buffer_create_type;
typedef cl_bitfield cl_map_flags;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_kernel_info;
typedef cl_uint cl_kernel_work_group_info;
typedef cl_uint cl_event_info;
typedef cl_uint cl_profiling_info;

}  // extern "C"

// ---- error codes -------------------------------------------------------------------------------
#define CL_SUCCESS 0
#define CL_DEVICE_NOT_FOUND -1
#define CL_DEVICE_NOT_AVAILABLE -2
#define CL_COMPILER_NOT_AVAILABLE -3
#define CL_MEM_OBJECT_ALLOCATION_FAILURE -4
#define CL_OUT_OF_RESOURCES -5
#define CL_OUT_OF_HOST_MEMORY -6
#define CL_PROFILING_INFO_NOT_AVAILABLE -7
#define CL_MEM_COPY_OVERLAP -8
#define CL_IMAGE_FORMAT_MISMATCH -9
#define CL_IMAGE_FORMAT_NOT_SUPPORTED -10
#define CL_BUILD_PROGRAM_FAILURE -11
#define CL_MAP_FAILURE -12
#define CL_MISALIGNED_SUB_BUFFER_OFFSET -13
#define CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST -14
#define CL_COMPILE_PROGRAM_FAILURE -15
#define CL_LINKER_NOT_AVAILABLE -16
#define CL_LINK_PROGRAM_FAILURE -17
#define CL_DEVICE_PARTITION_FAILED -18
#define CL_KERNEL_ARG_INFO_NOT_AVAILABLE -19
#define CL_INVALID_VALUE -30
#define CL_INVALID_DEVICE_TYPE -31
#define CL_INVALID_PLATFORM -32
#define CL_INVALID_DEVICE -33
#define CL_INVALID_CONTEXT -34
#define CL_INVALID_QUEUE_PROPERTIES -35
#define CL_INVALID_COMMAND_QUEUE -36
#define CL_INVALID_HOST_PTR -37
#define CL_INVALID_MEM_OBJECT -38
#define CL_INVALID_IMAGE_FORMAT_DESCRIPTOR -39
#define CL_INVALID_IMAGE_SIZE -40
#define CL_INVALID_SAMPLER -41
#define CL_INVALID_BINARY -42
#define CL_INVALID_BUILD_OPTIONS -43
#define CL_INVALID_PROGRAM -44
#define CL_INVALID_PROGRAM_EXECUTABLE -45
#define CL_INVALID_KERNEL_NAME -46
#define CL_INVALID_KERNEL_DEFINITION -47
#define CL_INVALID_KERNEL -48
#define CL_INVALID_ARG_INDEX -49
#define CL_INVALID_ARG_VALUE -50
#define CL_INVALID_ARG_SIZE -51
#define CL_INVALID_KERNEL_ARGS -52
#define CL_INVALID_WORK_DIMENSION -53
#define CL_INVALID_WORK_GROUP_SIZE -54
#define CL_INVALID_WORK_ITEM_SIZE -55
#define CL_INVALID_GLOBAL_OFFSET -56
#define CL_INVALID_EVENT_WAIT_LIST -57
#define CL_INVALID_EVENT -58
#define CL_INVALID_OPERATION -59
#define CL_INVALID_GL_OBJECT -60
#define CL_INVALID_BUFFER_SIZE -61
#define CL_INVALID_MIP_LEVEL -62
#define CL_INVALID_GLOBAL_WORK_SIZE -63
#define CL_INVALID_PROPERTY -64

// ---- booleans ----------------------------------------------------------------------------------
#define CL_FALSE 0
#define CL_TRUE 1

// ---- cl_platform_info --------------------------------------------------------------------------
#define CL_PLATFORM_PROFILE 0x0900
#define CL_PLATFORM_VERSION 0x0901
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VENDOR 0x0903
#define CL_PLATFORM_EXTENSIONS 0x0904

// ---- cl_device_type ----------------------------------------------------------------------------
#define CL_DEVICE_TYPE_DEFAULT (1 << 0)
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1 << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF

// ---- cl_device_info ----------------------------------------------------------------------------
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_VENDOR_ID 0x1001
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS 0x1003
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_WORK_ITEM_SIZES 0x1005
#define CL_DEVICE_ADDRESS_BITS 0x100D
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_MAX_PARAMETER_SIZE 0x1017
#define CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_LOCAL_MEM_SIZE 0x1023
#define CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#define CL_DEVICE_AVAILABLE 0x1027
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_PROFILE 0x102E
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030
#define CL_DEVICE_PLATFORM 0x1031
#define CL_DEVICE_DOUBLE_FP_CONFIG 0x1032
#define CL_DEVICE_OPENCL_C_VERSION 0x103D

// ---- cl_command_queue_properties, cl_command_queue_info ----------------------------------------
#define CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (1 << 0)
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
#define CL_QUEUE_CONTEXT 0x1090
#define CL_QUEUE_DEVICE 0x1091
#define CL_QUEUE_REFERENCE_COUNT 0x1092
#define CL_QUEUE_PROPERTIES 0x1093

// ---- cl_context_properties, cl_context_info ----------------------------------------------------
#define CL_CONTEXT_REFERENCE_COUNT 0x1080
#define CL_CONTEXT_DEVICES 0x1081
#define CL_CONTEXT_PROPERTIES 0x1082
#define CL_CONTEXT_NUM_DEVICES 0x1083
#define CL_CONTEXT_PLATFORM 0x1084

// ---- cl_mem_flags, cl_mem_migration_flags, cl_map_flags, cl_buffer_create_type -----------------
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_WRITE_ONLY (1 << 1)
#define CL_MEM_READ_ONLY (1 << 2)
#define CL_MEM_USE_HOST_PTR (1 << 3)
#define CL_MEM_ALLOC_HOST_PTR (1 << 4)
#define CL_MEM_COPY_HOST_PTR (1 << 5)
#define CL_MIGRATE_MEM_OBJECT_HOST (1 << 0)
#define CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED (1 << 1)
#define CL_MAP_READ (1 << 0)
#define CL_MAP_WRITE (1 << 1)
#define CL_MAP_WRITE_INVALIDATE_REGION (1 << 2)
#define CL_BUFFER_CREATE_TYPE_REGION 0x1220

// ---- cl_mem_info -------------------------------------------------------------------------------
#define CL_MEM_TYPE 0x1100
#define CL_MEM_FLAGS 0x1101
#define CL_MEM_SIZE 0x1102
#define CL_MEM_HOST_PTR 0x1103
#define CL_MEM_MAP_COUNT 0x1104
#define CL_MEM_REFERENCE_COUNT 0x1105
#define CL_MEM_CONTEXT 0x1106
#define CL_MEM_ASSOCIATED_MEMOBJECT 0x1107
#define CL_MEM_OFFSET 0x1108
#define CL_MEM_OBJECT_BUFFER 0x10F0  // cl_mem_object_type

// ---- cl_program_info, cl_program_build_info ----------------------------------------------------
#define CL_PROGRAM_REFERENCE_COUNT 0x1160
#define CL_PROGRAM_CONTEXT 0x1161
#define CL_PROGRAM_NUM_DEVICES 0x1162
#define CL_PROGRAM_DEVICES 0x1163
#define CL_PROGRAM_SOURCE 0x1164
#define CL_PROGRAM_BINARY_SIZES 0x1165
#define CL_PROGRAM_BINARIES 0x1166
#define CL_PROGRAM_BUILD_STATUS 0x1181
#define CL_PROGRAM_BUILD_OPTIONS 0x1182
#define CL_PROGRAM_BUILD_LOG 0x1183

// ---- cl_kernel_info, cl_kernel_work_group_info -------------------------------------------------
#define CL_KERNEL_FUNCTION_NAME 0x1190
#define CL_KERNEL_NUM_ARGS 0x1191
#define CL_KERNEL_REFERENCE_COUNT 0x1192
#define CL_KERNEL_CONTEXT 0x1193
#define CL_KERNEL_PROGRAM 0x1194
#define CL_KERNEL_WORK_GROUP_SIZE 0x11B0
#define CL_KERNEL_COMPILE_WORK_GROUP_SIZE 0x11B1
#define CL_KERNEL_LOCAL_MEM_SIZE 0x11B2
#define CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE 0x11B3
#define CL_KERNEL_PRIVATE_MEM_SIZE 0x11B4

// ---- cl_event_info, command execution status, cl_profiling_info --------------------------------
#define CL_EVENT_COMMAND_QUEUE 0x11D0
#define CL_EVENT_COMMAND_TYPE 0x11D1
#define CL_EVENT_REFERENCE_COUNT 0x11D2
#define CL_EVENT_COMMAND_EXECUTION_STATUS 0x11D3
#define CL_EVENT_CONTEXT 0x11D4
#define CL_COMPLETE 0x0
#define CL_RUNNING 0x1
#define CL_SUBMITTED 0x2
#define CL_QUEUED 0x3
#define CL_PROFILING_COMMAND_QUEUED 0x1280
#define CL_PROFILING_COMMAND_SUBMIT 0x1281
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

// ---- entry points ------------------------------------------------------------------------------
// Declared only for their types (runtime/OclApi.h loads them from the ICD loader at run time);
// nothing calls these names directly, so nothing links against them.
extern "C" {
cl_int CL_API_CALL clGetPlatformIDs(cl_uint num_entries, cl_platform_id* platforms,
                                    cl_uint* num_platforms);
cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                     size_t param_value_size, void* param_value,
                                     size_t* param_value_size_ret);
cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                  cl_uint num_entries, cl_device_id* devices,
                                  cl_uint* num_devices);
cl_int CL_API_CALL clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                   size_t param_value_size, void* param_value,
                                   size_t* param_value_size_ret);
cl_context CL_API_CALL clCreateContext(const cl_context_properties* properties,
                                       cl_uint num_devices, const cl_device_id* devices,
                                       void(CL_CALLBACK* pfn_notify)(const char* errinfo,
                                                                     const void* private_info,
                                                                     size_t cb, void* user_data),
                                       void* user_data, cl_int* errcode_ret);
cl_int CL_API_CALL clRetainContext(cl_context context);
cl_int CL_API_CALL clReleaseContext(cl_context context);
cl_int CL_API_CALL clGetContextInfo(cl_context context, cl_context_info param_name,
                                    size_t param_value_size, void* param_value,
                                    size_t* param_value_size_ret);
cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
                                                  cl_command_queue_properties properties,
                                                  cl_int* errcode_ret);
cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue command_queue);
cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue command_queue);
cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue command_queue,
                                         cl_command_queue_info param_name,
                                         size_t param_value_size, void* param_value,
                                         size_t* param_value_size_ret);
cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
                                  void* host_ptr, cl_int* errcode_ret);
cl_mem CL_API_CALL clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                                     cl_buffer_create_type buffer_create_type,
                                     const void* buffer_create_info, cl_int* errcode_ret);
cl_int CL_API_CALL clRetainMemObject(cl_mem memobj);
cl_int CL_API_CALL clReleaseMemObject(cl_mem memobj);
cl_int CL_API_CALL clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                                      size_t param_value_size, void* param_value,
                                      size_t* param_value_size_ret);
cl_program CL_API_CALL clCreateProgramWithSource(cl_context context, cl_uint count,
                                                 const char** strings, const size_t* lengths,
                                                 cl_int* errcode_ret);
cl_program CL_API_CALL clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                                 const cl_device_id* device_list,
                                                 const size_t* lengths,
                                                 const unsigned char** binaries,
                                                 cl_int* binary_status, cl_int* errcode_ret);
cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint num_devices,
                                  const cl_device_id* device_list, const char* options,
                                  void(CL_CALLBACK* pfn_notify)(cl_program program,
                                                                void* user_data),
                                  void* user_data);
cl_int CL_API_CALL clGetProgramInfo(cl_program program, cl_program_info param_name,
                                    size_t param_value_size, void* param_value,
                                    size_t* param_value_size_ret);
cl_int CL_API_CALL clGetProgramBuildInfo(cl_program program, cl_device_id device,
                                         cl_program_build_info param_name,
                                         size_t param_value_size, void* param_value,
                                         size_t* param_value_size_ret);
cl_int CL_API_CALL clReleaseProgram(cl_program program);
cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char* kernel_name,
                                     cl_int* errcode_ret);
cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel);
cl_int CL_API_CALL clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
                                  const void* arg_value);
cl_int CL_API_CALL clGetKernelInfo(cl_kernel kernel, cl_kernel_info param_name,
                                   size_t param_value_size, void* param_value,
                                   size_t* param_value_size_ret);
cl_int CL_API_CALL clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                            cl_kernel_work_group_info param_name,
                                            size_t param_value_size, void* param_value,
                                            size_t* param_value_size_ret);
cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
                                          cl_uint work_dim, const size_t* global_work_offset,
                                          const size_t* global_work_size,
                                          const size_t* local_work_size,
                                          cl_uint num_events_in_wait_list,
                                          const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer,
                                       cl_bool blocking_read, size_t offset, size_t size,
                                       void* ptr, cl_uint num_events_in_wait_list,
                                       const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                                        cl_bool blocking_write, size_t offset, size_t size,
                                        const void* ptr, cl_uint num_events_in_wait_list,
                                        const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                                       cl_mem dst_buffer, size_t src_offset, size_t dst_offset,
                                       size_t size, cl_uint num_events_in_wait_list,
                                       const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                                       const void* pattern, size_t pattern_size, size_t offset,
                                       size_t size, cl_uint num_events_in_wait_list,
                                       const cl_event* event_wait_list, cl_event* event);
void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                                     cl_bool blocking_map, cl_map_flags map_flags, size_t offset,
                                     size_t size, cl_uint num_events_in_wait_list,
                                     const cl_event* event_wait_list, cl_event* event,
                                     cl_int* errcode_ret);
cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
                                           void* mapped_ptr, cl_uint num_events_in_wait_list,
                                           const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue command_queue,
                                              cl_uint num_mem_objects, const cl_mem* mem_objects,
                                              cl_mem_migration_flags flags,
                                              cl_uint num_events_in_wait_list,
                                              const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
                                               cl_uint num_events_in_wait_list,
                                               const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
                                                cl_uint num_events_in_wait_list,
                                                const cl_event* event_wait_list, cl_event* event);
cl_int CL_API_CALL clFlush(cl_command_queue command_queue);
cl_int CL_API_CALL clFinish(cl_command_queue command_queue);
cl_int CL_API_CALL clWaitForEvents(cl_uint num_events, const cl_event* event_list);
cl_int CL_API_CALL clGetEventInfo(cl_event event, cl_event_info param_name,
                                  size_t param_value_size, void* param_value,
                                  size_t* param_value_size_ret);
cl_int CL_API_CALL clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                                           size_t param_value_size, void* param_value,
                                           size_t* param_value_size_ret);
cl_int CL_API_CALL clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                                      void(CL_CALLBACK* pfn_notify)(cl_event event,
                                                                    cl_int event_command_status,
                                                                    void* user_data),
                                      void* user_data);
cl_event CL_API_CALL clCreateUserEvent(cl_context context, cl_int* errcode_ret);
cl_int CL_API_CALL clSetUserEventStatus(cl_event event, cl_int execution_status);
cl_int CL_API_CALL clRetainEvent(cl_event event);
cl_int CL_API_CALL clReleaseEvent(cl_event event);
}  // extern "C"
