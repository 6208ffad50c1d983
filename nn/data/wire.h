/* wire.h -- Lua values as bytes, for DataLoader worker processes (one
 * process encodes a batch, its parent decodes it; both run the same
 * executable). nil, booleans, integers, floats, strings, plain tables
 * (any keys of those kinds, nested, no cycles), CPU tensors with their
 * attributes (tv_tensors) and functions that are fields of loaded modules
 * (by name) travel; other functions, userdata and tables with metatables
 * are refused with an error naming where they were found.
 * Tensors of at least WIRE_BIG bytes go into a memfd the receiver maps
 * (zero copy); smaller ones travel inside the message. */
#ifndef MT_WIRE_H
#define MT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "io/json.h"
#include "mtl.h"

#define WIRE_BIG ((size_t)1 << 16)

/* Appends the value at idx to msg; big tensors go to *fd (a memfd made on
 * first need, -1 until then; *fdlen its length). Raises a Lua error
 * ("<who>: ...") on what cannot travel; the caller frees msg and closes
 * *fd (keep them in a box with __gc). */
void mtn_wire_encode(lua_State *L, int idx, mt_buf *msg, int *fd, uint64_t *fdlen, const char *who);

/* Pushes the value encoded in msg[0..n); big tensors are mapped from fd
 * (-1 when the message carries none). Raises a Lua error on a malformed
 * message. */
void mtn_wire_decode(lua_State *L, const char *msg, size_t n, int fd, uint64_t fdlen, const char *who);

#endif
