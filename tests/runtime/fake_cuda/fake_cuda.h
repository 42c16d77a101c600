// fake_cuda.h: test hooks of the fake libcuda.so.1 (fake_libcuda.cpp), shared by the fake and
// fake_driver_test.cpp so both sides agree on the types the tests call through dlsym.
#ifndef SPL_TESTS_FAKE_CUDA_H
#define SPL_TESTS_FAKE_CUDA_H

struct CUctx_st;

extern "C" {

/* How often the runtime reached each part of the driver, and the last launch shape. */
struct FakeCudaStats {
  int primary_retains;
  int module_loads;
  int launches;
  int sync_allocs;
  int async_allocs;
  int sync_frees;
  int async_frees;
  int stream_syncs;
  int memsets;
  unsigned last_grid[3];
  unsigned last_block[3];
};

FakeCudaStats fake_cuda_stats(void);
/* A new non-primary context, as a user's own context would be; kept for the process. */
CUctx_st *fake_cuda_make_context(int id);
/* The fake's cuCtxSetCurrent (the driver's own entry point, for tests to switch contexts). */
int cuCtxSetCurrent(CUctx_st *ctx);

} // extern "C"

#endif // SPL_TESTS_FAKE_CUDA_H
