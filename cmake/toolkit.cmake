# Included before project(): finds nvcc and picks the GPU architectures when the user chose
# neither, so a plain `cmake -S . -B build` works for a new user.

# nvcc: CMake looks only at CUDACXX and PATH. The toolkit's installers put nvcc in
# /usr/local/cuda/bin without adding it to PATH, so look there too.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
  find_program(GPUBENCH_NVCC_ON_PATH nvcc)
  if(NOT GPUBENCH_NVCC_ON_PATH AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "CUDA compiler")
    message(STATUS "gpubench: nvcc is not on PATH; using /usr/local/cuda/bin/nvcc")
  endif()
endif()

# CUDA from pip (NVIDIA's wheels: cuda-toolkit[nvcc,crt,nvvm,cccl,cudart,cublas], see
# docs/install.md): nvcc lives in site-packages/nvidia/cu<major>/bin. The wheels ship
# libcudart.so.<major> without the libcudart.so link FindCUDAToolkit looks for, so name the file.
if(DEFINED CMAKE_CUDA_COMPILER AND CMAKE_CUDA_COMPILER MATCHES "/nvidia/cu([0-9]+)/bin/nvcc$"
   AND NOT DEFINED CUDA_CUDART)
  get_filename_component(gpubench_pip_cuda "${CMAKE_CUDA_COMPILER}" DIRECTORY)
  get_filename_component(gpubench_pip_cuda "${gpubench_pip_cuda}" DIRECTORY)
  file(GLOB gpubench_pip_cudart "${gpubench_pip_cuda}/lib/libcudart.so.${CMAKE_MATCH_1}")
  if(gpubench_pip_cudart)
    set(CUDA_CUDART "${gpubench_pip_cudart}" CACHE FILEPATH "CUDA runtime (from pip)")
    set(CUDAToolkit_ROOT "${gpubench_pip_cuda}")
    message(STATUS "gpubench: CUDA from pip in ${gpubench_pip_cuda}")
  endif()
endif()

# Architectures. With a GPU present (nvidia-smi answers), build for that GPU alone: one
# architecture instead of four halves the build. Otherwise the documented defaults: Ampere, Ada,
# Hopper machine code plus Hopper PTX for newer GPUs. Set before project(), which would otherwise
# fill in nvcc's own default (sm_75). -DGPUBENCH_DETECT_ARCH=OFF keeps the defaults.
option(GPUBENCH_DETECT_ARCH "Build only for the GPUs nvidia-smi reports, when there are any" ON)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(gpubench_archs "80-real;89-real;90-real;90-virtual")
  if(GPUBENCH_DETECT_ARCH)
    find_program(GPUBENCH_NVIDIA_SMI nvidia-smi)
    if(GPUBENCH_NVIDIA_SMI)
      execute_process(COMMAND ${GPUBENCH_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                      OUTPUT_VARIABLE caps RESULT_VARIABLE rc ERROR_QUIET TIMEOUT 20)
      if(rc EQUAL 0)
        string(REGEX MATCHALL "[0-9]+\\.[0-9]+" caps "${caps}")
        set(found "")
        foreach(cap IN LISTS caps)
          string(REPLACE "." "" cap "${cap}")
          list(APPEND found "${cap}-real")
        endforeach()
        list(REMOVE_DUPLICATES found)
        if(found)
          set(gpubench_archs "${found}")
          message(STATUS "gpubench: building for the GPUs present: ${found} "
                         "(-DCMAKE_CUDA_ARCHITECTURES=... to choose)")
        endif()
      endif()
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${gpubench_archs}" CACHE STRING "CUDA architectures")
endif()
