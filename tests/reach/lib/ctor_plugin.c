/* ctor_plugin.c - a plugin whose constructor calls back into the program
 * that loads it (loader_locks_ctor, exported by tests/reach/loader_locks):
 * the constructor runs with the loader's lock held, as every constructor
 * of a dlopen()ed library does. */
extern void loader_locks_ctor(void);
__attribute__((constructor)) static void ctor(void) { loader_locks_ctor(); }
int ctor_plugin_value(void) { return 42; }
