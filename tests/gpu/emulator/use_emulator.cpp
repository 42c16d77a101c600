// use_emulator.cpp: linked into the emulated GPU test programs (gpu_emulated_*): before main,
// points the runtime at the CPU emulator of the CUDA driver (cuda_emulator.cpp), whose path the
// build passes in SPL_CUDA_EMULATOR_PATH. The kernels of these programs are built with
// `splc --gpu-emulator`, so they run only there.
#include <cstdlib>

namespace {

struct UseEmulator {
  UseEmulator() { setenv("SPL_CUDA_DRIVER", SPL_CUDA_EMULATOR_PATH, 1); }
} useEmulator;

}  // namespace
