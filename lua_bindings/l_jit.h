/* l_jit.h -- private to lua_bindings/l_jit*.c: the compiled function
 * object (userdata) and the Lua-side helpers its files share. The entries,
 * guards, splitting and partition are plain C in jit/ (entry.h, split.h,
 * partition.h). */
#ifndef MTL_L_JIT_H
#define MTL_L_JIT_H
#include "entry.h"
#include "mtl.h"

#define JIT_FN "torch.CompiledFunction"

/* uservalues of a compiled function: 1 fn, 2 a table of paths and scalar sources */
enum { UV_FN = 1, UV_AUX = 2 };

typedef struct jfn {
  mtj_entry *entries;
  int ncompiled; /* graphs made for this function (recompile limit) */
  int retries;   /* captures redone because state was made during them */
  char name[96]; /* "compiled fn@file:line", the profiler's name for its graphs */
  int naux;      /* entries used in the aux table */
  bool dynamic, fullgraph, off, gave_up, warned_grad, quiet;
  bool splits;   /* it had a graph break: its captures record op calls */
  bool warned_break;
  int limit;
  char last_reason[200];
} jfn;

/* ---- l_jit_inputs.c ---- */
/* Stores the value on top of the stack (popped) as a new aux entry of the
 * compiled function at stack index 1; returns its index. */
int mtl_jit_add_aux(lua_State *L, jfn *f);
/* Follows path aux[i] from fn; NULL when it no longer leads to a tensor. */
mt_tensor *mtl_jit_resolve_path(lua_State *L, int i);
/* The tensor of entry e's input k at this call (fn at index 1, args from 2). */
mt_tensor *mtl_jit_source(lua_State *L, const mtj_entry *e, int k);
/* The number aux[i] = {table, key} holds now (NaN if not a number). */
double mtl_jit_table_number(lua_State *L, int i);
/* Pushes the table of jit.lua's helpers (loaded once). */
void mtl_jit_push_lua(lua_State *L);
/* Where each graph input ins[k] comes from at a later call (sets e->src,
 * or e->why, naming the entry first[k] of tr that reads it). */
void mtl_jit_locate_inputs(lua_State *L, jfn *f, mtj_entry *e, const mt_tensor **ins, const int *first, int nin,
                           int nargs, const mtg_trace *tr);

/* ---- l_jit_split.c: functions with graph breaks ---- */
/* Wraps the torch C functions once (torch.profiler.hooks) so that op calls
 * can be recorded and substituted. */
void mtl_jit_split_install(lua_State *L);
/* Replays e: runs fn with op calls substituted; returns fn's result count. */
int mtl_jit_split_run(lua_State *L, mtj_entry *e, int nargs, const mt_tensor *const *ins, const double *sc);
/* True while a function with graph breaks replays (torch.compiler.is_compiling). */
bool mtl_jit_split_replaying(void);

#endif
