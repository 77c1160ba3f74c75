/*
 * minirt.h - a stand-in for NVIDIA's shared runtime (build/tests/legacy-cuda/
 * rt/libcudart.so.13), built the way the real one reaches the driver
 * (CUDA-NOTES.md, traced on the H200): it dlopens libcuda.so.1, takes every
 * entry point from cuGetProcAddress_v2, and asks the driver for the current
 * context, its API version and its device before each call, returning their
 * error. Inside a host function the driver refuses those queries with 800, so
 * its cudaHostUnregister returns 800 there without reaching
 * cuMemHostUnregister, as the real runtime's does.
 */
#ifndef MINIRT_H
#define MINIRT_H

#include <stddef.h>

#include "simcuda.h"

int cudaHostRegister(void *p, size_t n, unsigned int flags);
int cudaHostUnregister(void *p);
int cudaLaunchHostFunc(CUstream s, CUhostFn fn, void *ud);

#endif
