/* l_serialize.c -- torch.save and torch.load (safetensors files through
 * tensor/io/st_file.c; nested tables through l_structure.c). CUDA tensors
 * are saved from host copies. Errors name the function and the
 * file; engine resources live in userdata boxes so a Lua error frees them. */
#include <string.h>

#include "cplx.h"
#include "io/safetensors.h"
#include "cuda/mt_cuda.h"
#include "mtl.h"

#define STRUCTURE_KEY "moontorch.structure"
/* safetensors has no complex128 code: such tensors are written as F64
 * [..., 2] (view_as_real) and their names listed, one a line, here */
#define COMPLEX128_KEY "moontorch.complex128"

static const char *check_path(lua_State *L, int idx, const char *fn) {
  if (lua_type(L, idx) != LUA_TSTRING)
    luaL_error(L, "%s: argument #%d must be a file path (a string), got a %s", fn, idx, luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

static int l_save(lua_State *L) {
  luaL_checkany(L, 1);
  const char *path = check_path(L, 2, "torch.save");
  lua_settop(L, 2);
  mtl_encode_structure(L, 1); /* 3: {name, tensor} list, 4: structure JSON or nil */
  int n = (int)lua_rawlen(L, 3);
  mt_st_item *items = lua_newuserdatauv(L, sizeof *items * (size_t)(n ? n : 1), 0);
  lua_newtable(L); /* 6: the complex128 names */
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, 3, i + 1);
    lua_rawgeti(L, -1, 1);
    items[i].name = lua_tolstring(L, -1, &items[i].name_len); /* anchored in the list */
    lua_rawgeti(L, -2, 2);
    items[i].t = mtl_to_tensor(L, -1);
    if (mt_tdevice(items[i].t).type == MT_CUDA) { /* saved from a host copy, anchored in the pair */
      mt_tensor *h = NULL;
      if (mt_cuda_to_device(items[i].t, mt_cpu(), false, &h) != MT_OK)
        return luaL_error(L, "torch.save: %s: %s", path, mt_errmsg());
      mtl_push_tensor(L, h);
      lua_rawseti(L, -4, 2); /* the pair */
      items[i].t = h;
    }
    if (items[i].t->dtype == MT_COMPLEX128) { /* its pairs, anchored in the pair; its name listed */
      mt_tensor *c = NULL, *p = NULL;
      if (memchr(items[i].name, '\n', items[i].name_len))
        return luaL_error(L, "torch.save: %s: a complex128 tensor's name holds a line break", path);
      mt_status st = mt_contiguous(items[i].t, &c);
      if (!st) st = mt_complex_pairs(c, &p);
      mt_release(c);
      if (st) return luaL_error(L, "torch.save: %s: %s", path, mt_errmsg());
      mtl_push_tensor(L, p);
      lua_rawseti(L, -4, 2);
      items[i].t = p;
      lua_pushlstring(L, items[i].name, items[i].name_len);
      lua_rawseti(L, 6, (lua_Integer)lua_rawlen(L, 6) + 1);
    }
    lua_pop(L, 3);
  }
  luaL_Buffer names; /* 7: the complex128 names, one a line */
  luaL_buffinit(L, &names);
  for (lua_Integer k = 1, m = (lua_Integer)lua_rawlen(L, 6); k <= m; k++) {
    lua_rawgeti(L, 6, k);
    luaL_addvalue(&names);
    luaL_addchar(&names, '\n');
  }
  luaL_pushresult(&names);
  mt_st_meta meta[2] = {{STRUCTURE_KEY, NULL, strlen(STRUCTURE_KEY), 0}, {COMPLEX128_KEY, NULL, strlen(COMPLEX128_KEY), 0}};
  int nmeta = 0;
  if (lua_isstring(L, 4)) {
    meta[0].val = lua_tolstring(L, 4, &meta[0].vlen);
    nmeta = 1;
  }
  if (lua_rawlen(L, -1) > 0) {
    meta[nmeta] = meta[1];
    meta[nmeta].val = lua_tolstring(L, -1, &meta[nmeta].vlen);
    nmeta++;
  }
  if (mt_st_save(path, items, n, meta, nmeta) != MT_OK) return luaL_error(L, "torch.save: %s: %s", path, mt_errmsg());
  return 0;
}

static int file_gc(lua_State *L) {
  mt_st_file_free(luaL_checkudata(L, 1, "mtl.st_file"));
  return 0;
}

static int l_load(lua_State *L) {
  const char *path = check_path(L, 1, "torch.load");
  lua_settop(L, 1);
  mt_st_file *f = lua_newuserdatauv(L, sizeof *f, 0); /* 2 */
  memset(f, 0, sizeof *f);
  if (luaL_newmetatable(L, "mtl.st_file")) {
    lua_pushcfunction(L, file_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  if (mt_st_load(path, f) != MT_OK) return luaL_error(L, "torch.load: %s: %s", path, mt_errmsg());
  lua_createtable(L, 0, f->h.n); /* 3: name -> tensor */
  for (int i = 0; i < f->h.n; i++) {
    lua_pushlstring(L, f->h.entries[i].name, f->h.entries[i].name_len);
    mt_tensor *t = f->tensors[i];
    f->tensors[i] = NULL;
    mtl_push_tensor(L, t);
    lua_rawset(L, 3);
  }
  for (int i = 0; i < f->h.nmeta; i++) { /* complex128 tensors written as their pairs */
    const mt_st_meta *m = &f->h.meta[i];
    if (m->klen != strlen(COMPLEX128_KEY) || memcmp(m->key, COMPLEX128_KEY, m->klen) != 0) continue;
    for (const char *p = m->val, *end = m->val + m->vlen, *nl; p < end; p = nl + 1) {
      if (!(nl = memchr(p, '\n', (size_t)(end - p)))) nl = end;
      lua_pushlstring(L, p, (size_t)(nl - p));
      mt_tensor *t = lua_rawget(L, 3) != LUA_TNIL ? mtl_to_tensor(L, -1) : NULL, *c = NULL;
      if (t && t->dtype == MT_FLOAT64 && mt_view_as_complex(t, &c) == MT_OK) {
        mt_release(c->base);
        c->base = NULL;
        lua_pushlstring(L, p, (size_t)(nl - p));
        mtl_push_tensor(L, c);
        lua_rawset(L, 3);
      }
      lua_pop(L, 1);
    }
  }
  for (int i = 0; i < f->h.nmeta; i++) {
    const mt_st_meta *m = &f->h.meta[i];
    if (m->klen == strlen(STRUCTURE_KEY) && memcmp(m->key, STRUCTURE_KEY, m->klen) == 0) {
      mtl_decode_structure(L, m->val, m->vlen, 3, path);
      mt_st_file_free(f);
      return 1;
    }
  }
  mt_st_file_free(f);
  return 1; /* a plain file: the name -> tensor table */
}

static const mtl_reg regs[] = {
    {"save", l_save, MTL_FN,
     "torch.save(obj, path) -- write a tensor, a name->tensor table or a nested table of tensors and plain values "
     "as a safetensors file (atomically replaced)"},
    {"load", l_load, MTL_FN,
     "torch.load(path) -- read a safetensors file: what torch.save wrote, or a name->tensor table for other files"},
    {NULL, NULL, 0, NULL}};

void mtl_open_serialize(lua_State *L, int torch_idx, int methods_idx) {
  mtl_register(L, torch_idx, methods_idx, regs);
}
