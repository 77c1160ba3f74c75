/*
 * owed.h - the model's bases that owe the program one successful unregister.
 *
 * Bases freed, reallocated or mapped over while registered (G7): safepin
 * released their registrations, and the program's next unregister of such a
 * base gets success, as the bare runtime's stale registration answers
 * (once, and only while safepin still remembers that release: then
 * "not registered"). A new registration at the base ends it. Shared by the
 * threads: an allocator may hand one thread's freed address to another.
 * (model.c and model_cuda.c.)
 */
#ifndef MODEL_OWED_H
#define MODEL_OWED_H

#include <pthread.h>

#define OWED_MAX 512
static pthread_mutex_t g_owed_mu = PTHREAD_MUTEX_INITIALIZER;
static void *g_owed[OWED_MAX];

/* on: p owes one; off: p owes none (a new registration there). */
static void owed_set(void *p, int on)
{
    pthread_mutex_lock(&g_owed_mu);
    int free_i = -1;
    for (int k = 0; k < OWED_MAX; k++) {
        if (g_owed[k] == p) {
            if (!on)
                g_owed[k] = NULL;
            pthread_mutex_unlock(&g_owed_mu);
            return;
        }
        if (!g_owed[k] && free_i < 0)
            free_i = k;
    }
    if (on && free_i >= 0)
        g_owed[free_i] = p;
    pthread_mutex_unlock(&g_owed_mu);
}

/* 1 if p owed one (and no longer does). */
static int owed_take(void *p)
{
    pthread_mutex_lock(&g_owed_mu);
    int found = 0;
    for (int k = 0; k < OWED_MAX && !found; k++)
        if (g_owed[k] == p) {
            g_owed[k] = NULL;
            found = 1;
        }
    pthread_mutex_unlock(&g_owed_mu);
    return found;
}

#endif
