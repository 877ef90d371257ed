// Precompiled header: the heavy torch headers every translation unit needs, parsed once.
#pragma once
#include <ATen/ATen.h>
#include <torch/library.h>

#include "runtime/OpenCL.h"
