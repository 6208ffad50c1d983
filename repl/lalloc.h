/* lalloc.h -- the executable's Lua allocator (see lalloc.c). Create the
 * pools with mtr_lua_alloc_state() and pass both to lua_newstate. */
#ifndef MTR_LALLOC_H
#define MTR_LALLOC_H

#include <stdbool.h>
#include <stddef.h>

void *mtr_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
void *mtr_lua_alloc_state(void);
/* Frees the pools and every block they keep; call after lua_close. */
void mtr_lua_alloc_free(void *ud);

#endif
