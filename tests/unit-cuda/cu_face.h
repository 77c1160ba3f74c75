// cu_face.h - what the CUDA face's tests start from: simcuda initialized,
// device 0's primary context current on the calling thread, safepin
// initialized and its CUDA face active.
#ifndef SAFEPIN_TEST_CU_FACE_H
#define SAFEPIN_TEST_CU_FACE_H

#include <gtest/gtest.h>
#include "cuda_real.h"
#include "interpose.h"
#include "simcuda.h"

inline void cu_face_enter(CUcontext *ctx)
{
    sp_init();
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    CUdevice dev;
    ASSERT_EQ(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(ctx, dev), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(*ctx), CUDA_SUCCESS);
    sp_cu_enter();
    ASSERT_TRUE(sp_cu_active());
}

#endif
