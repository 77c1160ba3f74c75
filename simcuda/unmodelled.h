/* unmodelled.h - the entry points simcuda does not model (unmodelled.c). */
#ifndef SIMCUDA_UNMODELLED_H
#define SIMCUDA_UNMODELLED_H

struct sc_unmodelled {
    const char *name; /* the exported name (with its _v2 / _ptsz suffix) */
    void *fn;         /* answers CUDA_ERROR_NOT_SUPPORTED */
};
/* Ends with { NULL, NULL }. */
extern const struct sc_unmodelled sc_unmodelled[];

#endif
