/*
 * faces.c - the faces linked in (face.h): the pointers the linker gathered
 * in the section "safepin_faces", lowest order first.
 */
#include "face.h"

/* Bounds of the section, defined by the linker for the object it links
 * (the library, or a test binary); weak: no face at all is an empty set. */
extern const sp_face *const __start_safepin_faces[] __attribute__((weak, visibility("hidden")));
extern const sp_face *const __stop_safepin_faces[] __attribute__((weak, visibility("hidden")));

/* Raw: dlvsym asks while a sanitizer runtime starts (dlvsym.c). */
__attribute__((no_sanitize_address, no_sanitize("thread"))) int sp_faces(const sp_face **out, int max)
{
    int n = 0;
    if (!__start_safepin_faces)
        return 0;
    for (const sp_face *const *p = __start_safepin_faces; p < __stop_safepin_faces && n < max; p++) {
        const sp_face *f = *p;
        if (!f)
            continue;
        /* Insertion by order: stable, so a tie keeps link order. */
        int i = n++;
        while (i > 0 && out[i - 1]->order > f->order) {
            out[i] = out[i - 1];
            i--;
        }
        out[i] = f;
    }
    return n;
}

int sp_faces_have_runtime(void)
{
    const sp_face *faces[SP_FACES_MAX];
    for (int i = 0, n = sp_faces(faces, SP_FACES_MAX); i < n; i++)
        if (faces[i]->has_runtime && faces[i]->has_runtime())
            return 1;
    return 0;
}
