/* l_io.c -- the C half of torch.audio's io (domains/audio/io.lua and
 * _stream_reader.lua): an open sound as a Lua object (info, seek, read into
 * a new tensor) and save from a tensor. The file work is sound.c and
 * sound_write.c; this file only moves values between Lua and them. */
#include <string.h>

#include "mtl.h"
#include "sound.h"

#define SOUND_MT "torch.audio.Sound"

typedef struct sound_ud {
  mtd_sound *s;
  int64_t pos; /* the read position, in frames */
} sound_ud;

static sound_ud *check_sound(lua_State *L) {
  sound_ud *u = luaL_checkudata(L, 1, SOUND_MT);
  if (!u->s) luaL_error(L, "torch.audio: the sound was closed");
  return u;
}

/* open(src, is_bytes) -> sound, or nil and the reason. A byte string is
 * kept alive by the sound (its user value) while libsndfile reads it. */
static int l_open(lua_State *L) {
  size_t len;
  const char *src = luaL_checklstring(L, 1, &len);
  int bytes = lua_toboolean(L, 2);
  sound_ud *u = lua_newuserdatauv(L, sizeof *u, 1);
  u->s = NULL;
  u->pos = 0;
  luaL_setmetatable(L, SOUND_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  if (mtd_sound_open(bytes ? NULL : src, bytes ? src : NULL, bytes ? len : 0, &u->s) != MT_OK) {
    lua_pushnil(L);
    lua_pushstring(L, mt_errmsg());
    return 2;
  }
  return 1;
}

/* sound:info() -> {sample_rate=, num_frames=, num_channels=,
 * bits_per_sample=, encoding=, raw_dtype=} */
static int s_info(lua_State *L) {
  const mtd_sound_info *in = mtd_sound_info_of(check_sound(L)->s);
  lua_createtable(L, 0, 6);
  lua_pushinteger(L, in->sample_rate);
  lua_setfield(L, -2, "sample_rate");
  lua_pushinteger(L, in->frames);
  lua_setfield(L, -2, "num_frames");
  lua_pushinteger(L, in->channels);
  lua_setfield(L, -2, "num_channels");
  lua_pushinteger(L, in->bits_per_sample);
  lua_setfield(L, -2, "bits_per_sample");
  lua_pushstring(L, in->encoding);
  lua_setfield(L, -2, "encoding");
  lua_pushstring(L, mt_dtype_name(in->raw_dtype));
  lua_setfield(L, -2, "raw_dtype");
  return 1;
}

/* raises the engine's message as it is: io.lua and _stream_reader.lua
 * catch it and name the call and the file */
static int bare_error(lua_State *L) {
  lua_pushstring(L, mt_errmsg());
  return lua_error(L);
}

/* sound:seek(frame) -- 0-based frame, 0..num_frames */
static int s_seek(lua_State *L) {
  sound_ud *u = check_sound(L);
  int64_t f = luaL_checkinteger(L, 2);
  if (mtd_sound_seek(u->s, f) != MT_OK) return bare_error(L);
  u->pos = f;
  return 0;
}

static int s_tell(lua_State *L) {
  lua_pushinteger(L, check_sound(L)->pos);
  return 1;
}

/* t (n frames) -> its first got frames along dim, as a new dense tensor */
static mt_status shorten(mt_tensor **t, int dim, int64_t got) {
  mt_tensor *v = NULL, *c = NULL;
  mt_status st = mt_narrow(*t, dim, 0, got, &v);
  if (!st) st = mt_clone(v, &c);
  if (v) mt_release(v);
  mt_release(*t);
  *t = c;
  return st;
}

/* sound:read(n, dtype, channels_first) -> tensor of up to n frames ([C, T]
 * or [T, C]) from the read position; 0 frames at the end */
static int s_read(lua_State *L) {
  sound_ud *u = check_sound(L);
  int64_t n = luaL_checkinteger(L, 2);
  mt_dtype dt = mtl_check_dtype(L, 3, "torch.audio.read");
  int first = lua_toboolean(L, 4);
  int64_t C = mtd_sound_info_of(u->s)->channels;
  if (n < 0 || n > ((int64_t)1 << 40) / C) return luaL_error(L, "torch.audio: cannot read %lld frames", (long long)n);
  int64_t shape[2] = {first ? C : n, first ? n : C};
  mt_tensor *t = NULL;
  MTL_CHECK_OP(L, "torch.audio", mt_empty(shape, 2, dt, mt_cpu(), &t));
  int64_t got;
  mt_status st = mtd_sound_read(u->s, dt, mt_data(t), n, first ? n : 1, first ? 1 : C, &got);
  if (!st && got < n) st = shorten(&t, first ? 1 : 0, got);
  if (st) {
    if (t) mt_release(t);
    return bare_error(L);
  }
  u->pos += got;
  mtl_push_tensor(L, t);
  return 1;
}

static int s_close(lua_State *L) {
  sound_ud *u = luaL_checkudata(L, 1, SOUND_MT);
  mtd_sound_close(u->s);
  u->s = NULL;
  return 0;
}

/* save(path, x, sample_rate, format, encoding|nil, bits, compression,
 * channels_first) -> true, or nil and why (io.lua names the call): x a
 * dense 2-D CPU tensor (float32, float64, int32, int16 or uint8) */
static int l_save(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  mt_tensor *x = mtl_check_tensor(L, 2, "torch.audio.save");
  mtd_sound_spec spec = {0};
  spec.sample_rate = (int)luaL_checkinteger(L, 3);
  const char *format = luaL_checkstring(L, 4), *enc = luaL_optstring(L, 5, NULL);
  int bits = (int)luaL_optinteger(L, 6, 0);
  spec.compression = luaL_optnumber(L, 7, -1);
  int first = lua_toboolean(L, 8);
  if (x->ndim != 2 || !mt_is_contiguous(x) || mt_tdevice(x).type != MT_CPU)
    return luaL_error(L, "torch.audio.save: internal: a dense 2-D CPU tensor is needed");
  mt_dtype dt = (mt_dtype)x->dtype;
  spec.channels = (int)x->shape[first ? 0 : 1];
  int64_t frames = x->shape[first ? 1 : 0];
  if (mtd_sound_format(format, enc, bits, dt, &spec.format) != MT_OK ||
      mtd_sound_write(path, &spec, dt, mt_data(x), frames, first ? frames : 1, first ? 1 : spec.channels) != MT_OK)
    return lua_pushnil(L), lua_pushstring(L, mt_errmsg()), 2;
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg sound_methods[] = {{"info", s_info}, {"seek", s_seek},   {"tell", s_tell},
                                         {"read", s_read}, {"close", s_close}, {NULL, NULL}};

static const mtl_reg regs[] = {
    {"open", l_open, MTL_FN,
     "torch.audio._io.open(src, is_bytes) -- an open sound (a path, or the file's bytes), or nil and why"},
    {"save", l_save, MTL_FN,
     "torch.audio._io.save(path, x, sample_rate, format, encoding, bits, compression, channels_first) -- write a "
     "sound file"},
    {NULL, NULL, 0, NULL}};

/* require "torch.audio._io" */
int luaopen_torch_audio__io(lua_State *L) {
  mtl_new_class(L, SOUND_MT, sound_methods, s_close);
  lua_newtable(L);
  mtl_register(L, lua_gettop(L), lua_gettop(L), regs);
  return 1;
}
