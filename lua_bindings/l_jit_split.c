/* l_jit_split.c -- compiled functions with graph breaks. A host read
 * inside fn (x:item(), tostring, totable) splits its trace into segments,
 * each compiled as a graph; Lua runs between them, so what it does with
 * the value it read can depend on it.
 *
 * Once a function shows a break, the op calls of its Lua code are counted:
 * every C function of the torch table, its op tables, the Tensor methods
 * and metamethods is wrapped (torch.profiler.hooks, installed once). The
 * capture records each call: the function, its tensor arguments and
 * results (as ids), the trace entries it made, and which calls read a
 * value on the host. Calls that made trace entries are substituted at
 * replay: fn runs again in Lua, but such a call returns the tensors its
 * segment computed instead of running. Other calls (queries, setters, the
 * host reads) run for real. A segment runs when the first call that needs
 * it is reached, so every host read sees real values; results of
 * substituted calls have no autograd history (a backward inside fn is a
 * substituted call whose gradients the segments set).
 *
 * The call sequence is checked at replay: another function called, or a
 * tensor argument that is not the one the capture saw, means fn took
 * another path (Lua state the guards do not cover changed); the call
 * raises an error naming the line, and the entry is dropped so the next
 * call captures again. Shared types: l_jit.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "profiler.h"
#include "jit.h"
#include "mtl.h"
#include "l_jit.h"

#define MAXCARGS 8 /* tensor arguments of a call that are checked */

enum { JR_NIL, JR_BOOL, JR_NUM, JR_INT, JR_TENSOR, JR_TABLE, JR_OTHER };

typedef struct jres {
  int8_t kind;
  int id;       /* JR_TENSOR */
  int8_t ndim, dtype; /* JR_TENSOR: for a stand-in (ndim -1: none) */
  int64_t shape[MT_MAXDIM];
  double num;   /* JR_NUM, JR_INT, JR_BOOL */
  int *ids;     /* JR_TABLE: an array of tensors */
  int nids;
} jres;

/* A number a call received: argument arg, or field key of the option table
 * at arg. Substituted calls are guarded on it: the capture baked it into a
 * graph, unless it equals fn's number argument sck (then a runtime scalar
 * of the graphs, compared with that argument's value at the call). */
typedef struct jnum {
  int8_t arg;
  int8_t sck; /* -1: a constant */
  char key[22];
  double v;
} jnum;

typedef struct jcall {
  const void *fn; /* the wrapped C function */
  int parent;     /* the call it ran inside (-1: none) */
  int n0, n1;     /* trace entries [n0, n1) were made during it */
  bool sync, subst;
  int seg;        /* subst: its segment; sync: the first segment after it */
  int nargs;
  int argid[MAXCARGS];
  int nres;
  jres *res;
  int nnum;
  jnum *num;
} jcall;

/* Tensor ids: index into vals; a pointer hash finds a tensor's id. */
typedef struct idmap {
  mt_tensor **vals; /* owned */
  bool *read;       /* capture: its data was read by a call that ran (a host read, a setter) */
  int n, cap;
  int *slot;        /* open addressing: id + 1, 0 empty */
  int hcap;
} idmap;

struct jit_rec {
  double fnum[MAXARGS]; /* fn's number arguments at the capture (NaN: not a number) */
  int nfnum;
  jcall *calls;
  int ncalls, cap;
  int stack[64], depth;
  idmap ids;
  int *bound, nbound; /* trace positions of the host reads (print and tostring run no recorded call) */
  bool overflow;
};

typedef struct jseg {
  mtj_compiled *c;
  int nin, nout;
  int *in_id, *out_id;
} jseg;

struct jit_split {
  jcall *calls;
  int ncalls;
  int nids;
  jseg *seg;
  int nseg;
  int *ext_id; /* entry input k: its id */
  int ngrad;
  struct {
    int leaf, grad, seg;
  } *grad;       /* .grad side effects: set after segment seg ran */
  char name[112];
  bool dead;     /* the replay diverged: dropped */
  bool warned_branch;
};

/* replay state of this thread (NULL when no split replay runs) */
typedef struct jit_rep {
  jit_split *s;
  mt_tensor **vals; /* [nids], owned */
  int next;         /* index of the next call */
  int done;         /* segments run */
  double sc[MAXARGS + MAXSCT];
  bool eager;       /* it took another path where no later segment had run: finishing eagerly */
} jit_rep;
static _Thread_local jit_rep *rep_now;

/* ---- ids ---- */

static unsigned hash_ptr(const void *p) { return (unsigned)(((uintptr_t)p >> 4) * 2654435761u); }

static int id_find(const idmap *m, const mt_tensor *t) {
  if (!m->hcap) return -1;
  for (unsigned h = hash_ptr(t) & (unsigned)(m->hcap - 1);; h = (h + 1) & (unsigned)(m->hcap - 1)) {
    if (!m->slot[h]) return -1;
    if (m->vals[m->slot[h] - 1] == t) return m->slot[h] - 1;
  }
}

static bool id_grow(idmap *m) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    mt_tensor **v = realloc(m->vals, (size_t)cap * sizeof *v);
    if (!v) return false;
    m->vals = v;
    bool *r = realloc(m->read, (size_t)cap * sizeof *r);
    if (!r) return false;
    m->read = r, m->cap = cap;
  }
  if (2 * (m->n + 1) > m->hcap) {
    int hcap = m->hcap ? 2 * m->hcap : 128;
    int *s = calloc((size_t)hcap, sizeof *s);
    if (!s) return false;
    for (int i = 0; i < m->n; i++) {
      unsigned h = hash_ptr(m->vals[i]) & (unsigned)(hcap - 1);
      while (s[h]) h = (h + 1) & (unsigned)(hcap - 1);
      s[h] = i + 1;
    }
    free(m->slot);
    m->slot = s, m->hcap = hcap;
  }
  return true;
}

/* t's id, made (t retained) when new; -1 when out of memory. */
static int id_of(idmap *m, const mt_tensor *t) {
  int id = id_find(m, t);
  if (id >= 0) return id;
  if (!id_grow(m)) return -1;
  id = m->n++;
  m->vals[id] = mt_retain((mt_tensor *)t);
  m->read[id] = false;
  unsigned h = hash_ptr(t) & (unsigned)(m->hcap - 1);
  while (m->slot[h]) h = (h + 1) & (unsigned)(m->hcap - 1);
  m->slot[h] = id + 1;
  return id;
}

static void id_free(idmap *m) {
  for (int i = 0; i < m->n; i++) mt_release(m->vals[i]);
  free(m->vals);
  free(m->read);
  free(m->slot);
  memset(m, 0, sizeof *m);
}

static void calls_free(jcall *c, int n) {
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < c[i].nres; r++) free(c[i].res[r].ids);
    free(c[i].res);
    free(c[i].num);
  }
  free(c);
}

/* ---- recording (capture) ---- */

jit_rec *jit_rec_new(lua_State *L, int nargs) {
  jit_rec *r = calloc(1, sizeof(jit_rec));
  if (!r) return NULL;
  r->nfnum = nargs < MAXARGS ? nargs : MAXARGS;
  for (int k = 0; k < r->nfnum; k++) r->fnum[k] = lua_type(L, 2 + k) == LUA_TNUMBER ? lua_tonumber(L, 2 + k) : 0.0 / 0.0;
  return r;
}

/* Adds number v (argument a, option key or "") to c's guarded numbers. */
static void add_num(jit_rec *r, jcall *c, int a, const char *key, double v) {
  if (c->nnum % 8 == 0) {
    jnum *n = realloc(c->num, (size_t)(c->nnum + 8) * sizeof *n);
    if (!n) {
      r->overflow = true;
      return;
    }
    c->num = n;
  }
  jnum *x = &c->num[c->nnum++];
  memset(x, 0, sizeof *x);
  x->arg = (int8_t)a, x->v = v, x->sck = -1;
  snprintf(x->key, sizeof x->key, "%s", key);
  for (int k = 0; k < r->nfnum; k++)
    if (r->fnum[k] == v) x->sck = (int8_t)k;
}

/* Records the numbers among c's arguments: plain ones and the fields of
 * option tables (no metatable, string keys). */
static void record_numbers(lua_State *L, jit_rec *r, jcall *c, int n) {
  for (int a = 1; a <= n && a <= MAXCARGS; a++) {
    if (lua_type(L, a) == LUA_TNUMBER) {
      add_num(r, c, a, "", lua_tonumber(L, a));
    } else if (lua_type(L, a) == LUA_TTABLE && !lua_getmetatable(L, a)) {
      lua_pushnil(L);
      while (lua_next(L, a)) {
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TNUMBER && lua_rawlen(L, -2) < 22)
          add_num(r, c, a, lua_tostring(L, -2), lua_tonumber(L, -1));
        lua_pop(L, 1);
      }
    } else if (lua_type(L, a) == LUA_TTABLE) {
      lua_pop(L, 1); /* the metatable */
    }
  }
}

void jit_rec_free(jit_rec *r) {
  if (!r) return;
  calls_free(r->calls, r->ncalls);
  id_free(&r->ids);
  free(r->bound);
  free(r);
}

void jit_rec_sync(jit_rec *r) {
  if (r->depth > 0) r->calls[r->stack[r->depth - 1]].sync = true;
  if (r->nbound % 16 == 0) {
    int *b = realloc(r->bound, (size_t)(r->nbound + 16) * sizeof *b);
    if (!b) {
      r->overflow = true;
      return;
    }
    r->bound = b;
  }
  r->bound[r->nbound++] = mtg_tracing ? mtg_tracing->n : 0;
}

/* Records the values at [base, base + n) as results of call c. */
static void record_results(lua_State *L, jit_rec *r, jcall *c, int base, int n) {
  c->res = calloc((size_t)n + 1, sizeof *c->res);
  if (!c->res) {
    r->overflow = true;
    return;
  }
  c->nres = n;
  for (int i = 0; i < n; i++) {
    jres *x = &c->res[i];
    int idx = base + i, ty = lua_type(L, idx);
    const mt_tensor *t = ty == LUA_TUSERDATA ? mtl_peek_tensor(L, idx) : NULL;
    if (ty == LUA_TNIL) x->kind = JR_NIL;
    else if (ty == LUA_TBOOLEAN) x->kind = JR_BOOL, x->num = lua_toboolean(L, idx);
    else if (ty == LUA_TNUMBER) x->kind = lua_isinteger(L, idx) ? JR_INT : JR_NUM, x->num = lua_tonumber(L, idx);
    else if (t) {
      x->kind = JR_TENSOR, x->id = id_of(&r->ids, mtl_to_tensor(L, idx));
      x->ndim = t->ndim, x->dtype = t->dtype;
      memcpy(x->shape, t->shape, sizeof x->shape);
    }
    else if (ty == LUA_TTABLE && lua_rawlen(L, idx) > 0 && !lua_getmetatable(L, idx)) {
      int len = (int)lua_rawlen(L, idx);
      x->kind = JR_TABLE;
      x->ids = malloc((size_t)len * sizeof *x->ids);
      x->nids = x->ids ? len : 0;
      for (int k = 1; k <= x->nids; k++) {
        lua_rawgeti(L, idx, k);
        const mt_tensor *e = lua_type(L, -1) == LUA_TUSERDATA ? mtl_peek_tensor(L, -1) : NULL;
        x->ids[k - 1] = e ? id_of(&r->ids, mtl_to_tensor(L, -1)) : -1;
        if (x->ids[k - 1] >= 0) r->ids.read[x->ids[k - 1]] = true; /* tables of results are always computed */
        if (!e) x->kind = JR_OTHER;
        lua_pop(L, 1);
      }
    } else {
      if (ty == LUA_TTABLE && lua_getmetatable(L, idx)) lua_pop(L, 1);
      x->kind = JR_OTHER;
    }
  }
}

static int call_original(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

static int record_call(lua_State *L, jit_rec *r) {
  if (r->ncalls == r->cap) {
    int cap = r->cap ? 2 * r->cap : 256;
    jcall *c = realloc(r->calls, (size_t)cap * sizeof *c);
    if (!c) return r->overflow = true, call_original(L);
    r->calls = c, r->cap = cap;
  }
  if (r->depth == (int)(sizeof r->stack / sizeof *r->stack)) return r->overflow = true, call_original(L);
  int i = r->ncalls++;
  jcall *c = &r->calls[i];
  memset(c, 0, sizeof *c);
  c->fn = lua_topointer(L, lua_upvalueindex(1));
  c->parent = r->depth ? r->stack[r->depth - 1] : -1;
  c->n0 = mtg_tracing ? mtg_tracing->n : 0;
  int n = lua_gettop(L);
  c->nargs = n < MAXCARGS ? n : MAXCARGS;
  for (int a = 0; a < c->nargs; a++)
    c->argid[a] = lua_type(L, a + 1) == LUA_TUSERDATA && mtl_peek_tensor(L, a + 1)
                      ? id_of(&r->ids, mtl_to_tensor(L, a + 1))
                      : -1;
  record_numbers(L, r, c, n);
  r->stack[r->depth++] = i;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET); /* an error ends the capture: the recording is dropped with it */
  r->depth--;
  c = &r->calls[i]; /* calls may have moved */
  c->n1 = mtg_tracing ? mtg_tracing->n : c->n0;
  if (c->n1 == c->n0) { /* it will run at replay: the tensors it reads must be real */
    bool lookup = lua_toboolean(L, lua_upvalueindex(2)) && c->nargs >= 2 && c->argid[1] < 0;
    for (int a = lookup ? 2 : 0; a < c->nargs; a++) /* __index(x, "k") reads no data; __newindex's value is kept */
      if (c->argid[a] >= 0) r->ids.read[c->argid[a]] = true;
  }
  int nres = lua_gettop(L);
  record_results(L, r, c, 1, nres);
  return nres;
}

/* ---- replay ---- */

/* fn took another path at call i. When no segment holding call i or a
 * later one ran yet (a branch on a value read on the host) and the call
 * can still run eagerly (eager_ok), the rest of this call runs eagerly:
 * Lua holds real tensors only; returns. Otherwise a segment already ran
 * ops this path does not make: raises an error, and the entry goes. */
static void diverged(lua_State *L, jit_rep *p, const char *fmt, int i, bool eager_ok) {
  jit_split *s = p->s;
  if (eager_ok && (i >= s->ncalls || p->done <= s->calls[i].seg)) {
    p->eager = true;
    if (!s->warned_branch) {
      s->warned_branch = true;
      luaL_where(L, 1);
      fprintf(stderr, "torch.compile: %s%s took another branch than at its capture (op call %d: %s); this call "
                      "finishes eagerly (warned once)\n", lua_tostring(L, -1), s->name, i + 1, fmt);
      lua_pop(L, 1);
    }
    return;
  }
  s->dead = true;
  luaL_error(L,
             "torch.compile: %s took another path than when it was captured (op call %d: %s); Lua state its "
             "guards do not cover changed. Its compiled graphs are dropped: the next call captures again",
             p->s->name, i + 1, fmt);
}

/* diverged, then the wrapped function runs for real. */
static int diverge(lua_State *L, jit_rep *p, const char *fmt, int i) {
  diverged(L, p, fmt, i, true);
  return call_original(L);
}

/* Runs segments up to and including last (in order, each once). False
 * when a segment's guards fail and the call goes on eagerly instead
 * (eager_ok; else that raises). */
static bool run_segments(lua_State *L, jit_rep *p, int last, bool eager_ok) {
  jit_split *s = p->s;
  while (p->done <= last && p->done < s->nseg) {
    jseg *g = &s->seg[p->done];
    const mt_tensor *ins[MTJ_MAXIN];
    for (int k = 0; k < g->nin; k++) {
      ins[k] = p->vals[g->in_id[k]];
      if (!ins[k]) luaL_error(L, "torch.compile: %s: graph %d lacks an input (internal error)", s->name, p->done + 1);
    }
    char why[200];
    if (!mtj_guard(g->c, ins, why, sizeof why)) {
      diverged(L, p, why, p->next - 1, eager_ok);
      return false;
    }
    mt_tensor *outs[MTJ_MAXOUT] = {0};
    int64_t tok = mtg_profiler_begin(s->name, ins, g->nin);
    mt_status st = mtj_run(g->c, ins, p->sc, outs);
    mtg_profiler_end(tok);
    for (int j = 0; j < g->nout; j++) {
      mt_release(p->vals[g->out_id[j]]);
      p->vals[g->out_id[j]] = outs[j];
      outs[j] = NULL;
    }
    for (int k = 0; k < MTJ_MAXOUT; k++) mt_release(outs[k]);
    for (int k = 0; k < s->ngrad && !st; k++)
      if (s->grad[k].seg == p->done) st = mtg_set_grad(p->vals[s->grad[k].leaf], p->vals[s->grad[k].grad]);
    p->done++;
    if (st) mtl_fail(L, st, NULL, NULL, NULL, NULL);
  }
  return true;
}

/* Pushes value id; a temporary no segment outputs gets a stand-in: the
 * right shape and dtype, broadcast from one element (Lua only passes it
 * on to other substituted calls or asks its size). */
static void push_tensor_id(lua_State *L, jit_rep *p, int id, const jres *x) {
  mt_tensor *t = id >= 0 ? p->vals[id] : NULL;
  if (!t && id >= 0 && x->ndim >= 0) {
    mt_tensor *one = NULL;
    int64_t ones[MT_MAXDIM];
    for (int d = 0; d < x->ndim; d++) ones[d] = 1;
    mt_status st = mt_zeros(ones, x->ndim, (mt_dtype)x->dtype, mt_cpu(), &one);
    if (!st) st = mt_expand(one, x->shape, x->ndim, &t);
    mt_release(one);
    if (st) mtl_fail(L, st, NULL, NULL, NULL, NULL);
    p->vals[id] = t;
  }
  if (!t) luaL_error(L, "torch.compile: %s: a result was not computed (internal error)", p->s->name);
  mtl_push_tensor(L, mt_retain(t));
}

static int replay_call(lua_State *L, jit_rep *p) {
  jit_split *s = p->s;
  if (p->eager) return call_original(L);
  int i = p->next++;
  const void *fn = lua_topointer(L, lua_upvalueindex(1));
  if (i >= s->ncalls) return diverge(L, p, "more op calls than at the capture", i);
  jcall *c = &s->calls[i];
  if (c->fn != fn) return diverge(L, p, "another function than at the capture", i);
  int n = lua_gettop(L);
  for (int a = 0; a < c->nargs && a < n; a++) {
    if (c->argid[a] < 0) continue;
    const mt_tensor *t = lua_type(L, a + 1) == LUA_TUSERDATA ? mtl_peek_tensor(L, a + 1) : NULL;
    if (!t) return diverge(L, p, "a tensor argument is missing", i);
    mt_tensor **v = &p->vals[c->argid[a]];
    if (!*v) *v = mt_retain(mtl_to_tensor(L, a + 1));
    else if (*v != t) return diverge(L, p, "a tensor argument is not the one the capture saw", i);
  }
  for (int k = 0; k < c->nnum && c->subst; k++) {
    const jnum *x = &c->num[k];
    double v = 0.0 / 0.0, want = x->sck >= 0 ? p->sc[x->sck] : x->v;
    if (x->key[0]) {
      lua_getfield(L, x->arg, x->key);
      v = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : v;
      lua_pop(L, 1);
    } else if (lua_type(L, x->arg) == LUA_TNUMBER) {
      v = lua_tonumber(L, x->arg);
    }
    if (v != want && !(v != v && want != want)) return diverge(L, p, "a number argument differs from the capture's", i);
  }
  if (!c->subst) {
    if (c->sync && !run_segments(L, p, c->seg - 1, true)) return call_original(L);
    int nres = call_original(L);
    for (int r = 0; r < c->nres && r < nres; r++)
      if (c->res[r].kind == JR_TENSOR && c->res[r].id >= 0 && !p->vals[c->res[r].id] &&
          lua_type(L, r + 1) == LUA_TUSERDATA)
        p->vals[c->res[r].id] = mt_retain(mtl_to_tensor(L, r + 1));
    return nres;
  }
  if (!run_segments(L, p, c->seg, true)) return call_original(L);
  lua_settop(L, 0);
  luaL_checkstack(L, c->nres + 2, "torch.compile: too many results");
  for (int r = 0; r < c->nres; r++) {
    const jres *x = &c->res[r];
    switch (x->kind) {
    case JR_NIL: lua_pushnil(L); break;
    case JR_BOOL: lua_pushboolean(L, x->num != 0); break;
    case JR_INT: lua_pushinteger(L, (lua_Integer)x->num); break;
    case JR_NUM: lua_pushnumber(L, x->num); break;
    case JR_TENSOR: push_tensor_id(L, p, x->id, x); break;
    default: /* JR_TABLE (substituted calls return no other kinds) */
      lua_createtable(L, x->nids, 0);
      for (int k = 0; k < x->nids; k++) {
        push_tensor_id(L, p, x->ids[k], &(jres){.ndim = -1});
        lua_rawseti(L, -2, k + 1);
      }
    }
  }
  return c->nres;
}

/* The wrapper of a C function (upvalue 1): counted and recorded while a
 * function with breaks is captured, substituted or checked while one
 * replays, else a plain call. */
static int split_call(lua_State *L) {
  if (rep_now) return replay_call(L, rep_now);
  if (jit_cap.active && jit_cap.rec) return record_call(L, jit_cap.rec);
  return call_original(L);
}

/* torch._jit_split_wrap(f, name, mode) -> the wrapper of f (hooks.install's
 * factory); upvalues: f, and whether it is __index/__newindex */
static int l_split_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  bool index = lua_type(L, 3) == LUA_TSTRING && strcmp(lua_tostring(L, 3), "index") == 0;
  lua_settop(L, 1);
  lua_pushvalue(L, 1);
  lua_pushboolean(L, index);
  lua_pushcclosure(L, split_call, 2);
  lua_getfield(L, LUA_REGISTRYINDEX, "mtl.help"); /* the wrapper keeps the original's help text */
  if (lua_istable(L, -1)) {
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
    lua_pushvalue(L, 2);
    lua_insert(L, -2);
    lua_rawset(L, -3);
  }
  lua_settop(L, 2);
  return 1;
}

void jit_split_install(lua_State *L) {
  static bool installed;
  if (installed) return;
  installed = true;
  lua_getglobal(L, "require");
  lua_pushstring(L, "torch.profiler.hooks");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "install");
  lua_pushcfunction(L, l_split_wrap);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
}

/* ---- building the segments ---- */

void jit_split_free(jit_split *s) {
  if (!s) return;
  calls_free(s->calls, s->ncalls);
  for (int k = 0; k < s->nseg; k++) {
    mtj_free(s->seg[k].c);
    free(s->seg[k].in_id);
    free(s->seg[k].out_id);
  }
  free(s->seg);
  free(s->ext_id);
  free(s->grad);
  free(s);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* The segment holding trace position pos. */
static int seg_of(const int *bound, int nb, int pos) {
  int s = 0;
  while (s < nb && bound[s] <= pos) s++;
  return s;
}

/* Position of the trace entry that made t (through aliases), -1 if none. */
static int producer(const mtg_trace *tr, const mt_tensor *t) {
  t = mtg_trace_root(tr, t);
  for (int k = tr->n - 1; k >= 0; k--) {
    if (tr->e[k].out == t && !tr->e[k].inplace) return k;
    for (int j = 0; j < tr->e[k].nout - 1; j++)
      if (tr->e[k].xout[j] == t) return k;
  }
  return -1;
}

/* Classifies the recorded calls: substituted ones (they made trace entries
 * and ran no other recorded call), their segments, the syncs' segments. */
static void classify(jentry *e, jcall *calls, int ncalls, const int *bound, int nb) {
  for (int i = 0; i < ncalls && !e->why[0]; i++) {
    jcall *c = &calls[i];
    int inner = 0;
    bool leaf = true;
    for (int j = i + 1; j < ncalls && calls[j].parent >= i; j++) /* i's subtree follows it */
      if (calls[j].parent == i) leaf = false, inner += calls[j].n1 - calls[j].n0;
    c->seg = seg_of(bound, nb, c->n0);
    if (c->n1 == c->n0) continue;
    if (!leaf) {
      if (inner != c->n1 - c->n0)
        snprintf(e->why, sizeof e->why, "a C function that calls back into Lua also made ops itself (a hook?)");
      continue;
    }
    if (c->sync || seg_of(bound, nb, c->n1 - 1) != c->seg)
      snprintf(e->why, sizeof e->why, "one op call both read a value on the host and made ops");
    for (int r = 0; r < c->nres && !e->why[0]; r++)
      if (c->res[r].kind == JR_OTHER)
        snprintf(e->why, sizeof e->why, "an op call returned a Lua value the JIT cannot stand in for");
    c->subst = true;
  }
}

/* need[i] for the tensors Lua saw that the replay must compute: those a
 * call that runs at replay reads, and those still referenced once the
 * capture's fn returned (a result, a table entry, a .grad, optimizer
 * state): references beyond the recorder's one and the trace's. The rest
 * were temporaries: at replay Lua gets a stand-in of the right shape. The
 * caller collected garbage first, so dead userdata hold no reference. */
static void mark_kept(const mtg_trace *tr, idmap *ids, int nvisible, bool *need) {
  int *uses = calloc((size_t)ids->n + 1, sizeof *uses);
  if (!uses) {
    for (int i = 0; i < nvisible; i++) need[i] = true;
    return;
  }
#define USE(t)                                                                                                         \
  do {                                                                                                                 \
    int id_ = (t) ? id_find(ids, (t)) : -1;                                                                            \
    if (id_ >= 0) uses[id_]++;                                                                                         \
  } while (0)
  for (int k = 0; k < tr->n; k++) {
    for (int j = 0; j < tr->e[k].nin; j++) USE(tr->e[k].in[j]);
    USE(tr->e[k].out);
    for (int j = 0; j < MTG_TRACE_NOUT - 1; j++) USE(tr->e[k].xout[j]);
  }
  for (int k = 0; k < tr->ngrads; k++) {
    USE(tr->grads[k].leaf);
    USE(tr->grads[k].grad);
  }
  for (int k = 0; k < 2 * tr->nalias; k++) USE(tr->alias[k]);
  for (int k = 0; k < tr->nfresh; k++) USE(tr->fresh[k]);
#undef USE
  for (int i = 0; i < nvisible; i++) need[i] = ids->read[i] || ids->vals[i]->refs > 1 + uses[i];
  free(uses);
}

void jit_split_build(lua_State *L, jfn *f, jentry *e, jit_rec *r, const mtg_trace *tr, int nargs, const double *sc,
                     const bool *isint, const mtj_options *o) {
  if (r->overflow) {
    snprintf(e->why, sizeof e->why, "out of memory recording its op calls");
    return;
  }
  jit_split *s = calloc(1, sizeof *s);
  int *bound = calloc((size_t)r->nbound + 1, sizeof *bound), nb = 0;
  if (!s || !bound) {
    free(s), free(bound);
    snprintf(e->why, sizeof e->why, "out of memory");
    return;
  }
  snprintf(s->name, sizeof s->name, "%s", f->name);
  s->warned_branch = f->quiet;
  for (int i = 0; i < r->nbound; i++)
    if (r->bound[i] > 0 && r->bound[i] < tr->n) bound[nb++] = r->bound[i];
  qsort(bound, (size_t)nb, sizeof *bound, cmp_int);
  int u = 0;
  for (int i = 0; i < nb; i++)
    if (!u || bound[u - 1] != bound[i]) bound[u++] = bound[i];
  nb = u;
  classify(e, r->calls, r->ncalls, bound, nb);
  s->nseg = nb + 1;
  s->seg = calloc((size_t)s->nseg, sizeof *s->seg);
  /* ids every later step needs: values Lua saw (made by the trace) are outputs of their segment */
  idmap *ids = &r->ids;
  int nvisible = ids->n;
  bool *need = NULL;
  const mt_tensor **ext = calloc(MTJ_MAXIN, sizeof *ext);
  int next = 0;
  for (int g = 0; g < s->nseg && !e->why[0] && s->seg; g++) {
    int b = g ? bound[g - 1] : 0, end = g < nb ? bound[g] : tr->n;
    mtg_trace part = *tr;
    part.e = tr->e + b, part.n = end - b, part.cap = part.n, part.grads = NULL, part.ngrads = 0;
    const mt_tensor *ins[MTJ_MAXIN];
    int nin = jit_graph_inputs(&part, e, ins);
    jseg *sg = &s->seg[g];
    sg->in_id = malloc((size_t)nin * sizeof *sg->in_id + 1);
    sg->nin = nin;
    for (int k = 0; k < nin && sg->in_id; k++) {
      sg->in_id[k] = id_of(ids, ins[k]);
      if (producer(tr, ins[k]) < 0) {
        bool have = false;
        for (int x = 0; x < next && !have; x++) have = ext[x] == ins[k];
        if (!have && next < MTJ_MAXIN) ext[next++] = ins[k];
      }
    }
  }
  /* gradients set during the capture: their leaves are inputs too */
  s->grad = calloc((size_t)tr->ngrads + 1, sizeof *s->grad);
  for (int k = 0; k < tr->ngrads && s->grad && !e->why[0]; k++) {
    const mtg_trace_grad *x = &tr->grads[k];
    if (!x->grad) continue; /* set to nil: the call that did it runs at replay */
    int pos = producer(tr, x->grad);
    if (pos < 0) {
      snprintf(e->why, sizeof e->why, "it sets a .grad to a tensor made outside the traced ops");
      break;
    }
    bool have = false;
    for (int j = 0; j < next && !have; j++) have = ext[j] == x->leaf;
    if (!have && next < MTJ_MAXIN) ext[next++] = x->leaf;
    s->grad[s->ngrad].leaf = id_of(ids, x->leaf);
    s->grad[s->ngrad].grad = id_of(ids, x->grad);
    s->grad[s->ngrad++].seg = seg_of(bound, nb, pos);
  }
  /* outputs: made in the segment, and seen by Lua, read by a later segment or a .grad */
  need = calloc((size_t)ids->n + 1, sizeof *need);
  mark_kept(tr, ids, nvisible, need);
  for (int g = 0; g < s->nseg && need && s->seg && !e->why[0]; g++)
    for (int k = 0; k < s->seg[g].nin && s->seg[g].in_id; k++) need[s->seg[g].in_id[k]] = true;
  for (int k = 0; k < s->ngrad && need; k++) need[s->grad[k].grad] = true;
  int *pseg = malloc((size_t)ids->n * sizeof *pseg + 1);
  for (int i = 0; i < ids->n && pseg; i++) {
    int pos = producer(tr, ids->vals[i]);
    pseg[i] = pos < 0 ? -1 : seg_of(bound, nb, pos);
  }
  for (int g = 0; g < s->nseg && need && pseg && s->seg && !e->why[0]; g++) {
    jseg *sg = &s->seg[g];
    sg->out_id = malloc((size_t)ids->n * sizeof *sg->out_id + 1);
    const mt_tensor **outs = malloc((size_t)ids->n * sizeof *outs + 1);
    if (!sg->out_id || !outs) {
      free(outs);
      snprintf(e->why, sizeof e->why, "out of memory");
      break;
    }
    for (int i = 0; i < ids->n; i++)
      if (need[i] && pseg[i] == g && sg->nout < MTJ_MAXOUT) sg->out_id[sg->nout] = i, outs[sg->nout++] = ids->vals[i];
    const mt_tensor *ins[MTJ_MAXIN];
    for (int k = 0; k < sg->nin; k++) ins[k] = ids->vals[sg->in_id[k]];
    int b = g ? bound[g - 1] : 0, end = g < nb ? bound[g] : tr->n;
    mtg_trace part = *tr;
    part.e = tr->e + b, part.n = end - b, part.cap = part.n, part.grads = NULL, part.ngrads = 0;
    if (mtj_compile(&part, ins, sg->nin, sc, isint, nargs, outs, sg->nout, o, &sg->c))
      snprintf(e->why, sizeof e->why, "graph %d of %d: %s", g + 1, s->nseg, mt_errmsg());
    free(outs);
  }
  if (!e->why[0] && (!need || !pseg || !s->seg || !s->grad)) snprintf(e->why, sizeof e->why, "out of memory");
  if (!e->why[0]) {
    jit_locate_inputs(L, f, e, ext, next, nargs, tr);
    s->ext_id = malloc((size_t)next * sizeof *s->ext_id + 1);
    for (int k = 0; k < next && s->ext_id; k++) {
      s->ext_id[k] = id_find(ids, ext[k]);
      if (e->grad_mode && mtg_requires_grad(ext[k])) e->rg[k / 64] |= 1ull << (k % 64);
    }
  }
  free(need), free(pseg), free(ext), free(bound);
  if (e->why[0]) {
    jit_split_free(s);
    return;
  }
  s->nids = ids->n;
  s->calls = r->calls, s->ncalls = r->ncalls; /* handed over */
  r->calls = NULL, r->ncalls = r->cap = 0;
  e->split = s;
}

bool jit_split_replaying(void) { return rep_now != NULL; }

int jit_split_nseg(const jit_split *s) { return s->nseg; }
bool jit_split_dead(const jit_split *s) { return s->dead; }

void jit_split_explain(const jit_split *s, FILE *f) {
  for (int g = 0; g < s->nseg; g++) {
    fprintf(f, "\n---- graph %d of %d ----\n", g + 1, s->nseg);
    mtj_explain(s->seg[g].c, f);
  }
}

static int trailing(lua_State *L) {
  jit_rep *p = lua_touserdata(L, 1);
  run_segments(L, p, p->s->nseg - 1, false); /* fn returned: too late to run it eagerly */
  return 0;
}

int jit_split_run(lua_State *L, jentry *e, int nargs, const mt_tensor *const *ins, const double *sc) {
  jit_split *s = e->split;
  jit_rep p = {.s = s};
  p.vals = calloc((size_t)s->nids + 1, sizeof *p.vals);
  if (!p.vals) return luaL_error(L, "torch.compile: out of memory");
  memcpy(p.sc, sc, sizeof p.sc);
  for (int k = 0; k < e->nin; k++)
    if (s->ext_id[k] >= 0) p.vals[s->ext_id[k]] = mt_retain((mt_tensor *)ins[k]);
  int base = lua_gettop(L);
  lua_getiuservalue(L, 1, UV_FN);
  for (int i = 0; i < nargs; i++) lua_pushvalue(L, 2 + i);
  jit_rep *prev = rep_now;
  rep_now = &p;
  int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
  rep_now = prev;
  if (rc == LUA_OK && p.next < s->ncalls && !p.eager && p.done <= s->calls[p.next].seg)
    p.eager = true; /* returned early, after a host read, before the next graph: nothing of it ran */
  if (rc == LUA_OK && p.next != s->ncalls && !p.eager) {
    s->dead = true;
    lua_settop(L, base);
    lua_pushfstring(L, "torch.compile: %s returned after %d of the %d op calls the capture saw; its compiled graphs "
                       "are dropped: the next call captures again", s->name, p.next, s->ncalls);
    rc = LUA_ERRRUN;
  }
  if (rc == LUA_OK && p.done < s->nseg && !p.eager) { /* trailing segments: their calls all came before the last host read */
    lua_pushcfunction(L, trailing);
    lua_pushlightuserdata(L, &p);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
      lua_insert(L, base + 1); /* the error below fn's results, which go */
      lua_settop(L, base + 1);
      rc = LUA_ERRRUN;
    }
  }
  for (int i = 0; i < s->nids; i++) mt_release(p.vals[i]);
  free(p.vals);
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L) - base;
}
