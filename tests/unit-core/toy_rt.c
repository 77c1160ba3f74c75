/* toy_rt.c - the toy runtime as a library of its own, which a program
 * dlopens and dlcloses (libtoy_rt.so, loaded by toy_face.cc's tests). */
__attribute__((visibility("default"))) int toyRtRegister(void *p, unsigned long n)
{
    return p && n ? 0 : 41;
}
