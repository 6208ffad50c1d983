/* node.h -- graph/'s internal interface: graph nodes, the autograd state
 * attached to tensors (mt_tensor.autograd), recording of an op, saved
 * tensors, and the derivative scope that keeps derivative code short. Only
 * graph/ includes it. */
#ifndef MTG_NODE_H
#define MTG_NODE_H
#include "graph.h"

#define MTG_MAXSAVED 6 /* sdpa_flash keeps q, k, v, mask, out and lse */
#define MTG_NARGS 20

/* Computes the gradients of a node's inputs from those of its outputs.
 * gout[0..nout) are never NULL (missing ones are zero-filled); gin[i] is set
 * (new reference) for each input i with mtg_needs(n, i), else may stay NULL. */
typedef mt_status (*mtg_backward_fn)(mtg_node *n, mt_tensor *const *gout, mt_tensor **gin);

/* Where the gradient of one input goes: output `input_nr` of node. */
typedef struct mtg_edge {
  mtg_node *node; /* NULL: the input needs no gradient */
  int input_nr;
} mtg_edge;

/* Shape and dtype of a node's input or output. */
typedef struct mtg_meta_shape {
  int64_t shape[MT_MAXDIM];
  int8_t ndim;
  int8_t dtype;
  mt_device device; /* where the tensor lived: gradients made from nothing go there */
} mtg_meta_shape;

/* A tensor kept for backward with the storage version it had when saved;
 * an output is kept without its autograd state (no cycle) and re-attached
 * to this node when unpacked. */
typedef struct mtg_saved {
  mt_tensor *t;
  uint32_t version;
  bool is_output;
  int output_nr;
} mtg_saved;

typedef struct mtg_hook {
  struct mtg_hook *next;
  int output_nr;         /* which output's gradient it sees */
  mtg_hook_fn fn;        /* NULL for a retain_grad entry */
  void *ctx;             /* retain_grad: the tensor (weak, cleared when freed) */
  void (*free_ctx)(void *);
} mtg_hook;

struct mtg_node {
  int refs;
  const char *name; /* "MulBackward0" */
  mtg_backward_fn backward;
  uint64_t seq; /* creation order: later nodes run first */
  int nin, nout, nsaved;
  bool released; /* saved tensors freed by a backward without retain_graph */
  mtg_edge *next;         /* [nin] */
  mtg_meta_shape *in;     /* [nin] */
  mtg_meta_shape *out;    /* [nout] */
  mtg_saved saved[MTG_MAXSAVED];
  int64_t i[MTG_NARGS]; /* op arguments: dims, sizes, flags */
  double f[4];
  mt_tensor *leaf;      /* accumulate nodes: the leaf (weak) */
  mtg_node *sub;        /* CopySlices: the node of the in-place op (owned) */
  void *ext;            /* nodes made by mtg_record_custom: their callback and context (owned) */
  void (*ext_free)(void *ext);
  mtg_hook *hooks;
  /* backward engine scratch, valid while run == the running pass */
  uint64_t run;
  int deps;
  bool needed;     /* its backward runs (autograd.grad runs only nodes leading to a requested input) */
  bool target;     /* a requested input's gradient is read from it */
  mt_tensor **buf; /* [nout]: &buf1 for one output */
  mt_tensor *buf1;
};

/* Autograd state of a tensor (mt_tensor.autograd). */
typedef struct mtg_meta {
  bool requires_grad; /* leaves: set by the user; others: grad_fn != NULL */
  bool retains_grad;
  mtg_node *grad_fn;  /* owned reference */
  int output_nr;
  mtg_node *accum;    /* leaves: the accumulate node (owned), made on demand */
  mt_tensor *grad;    /* owned */
} mtg_meta;

/* A new reference to t under the out convention's calling style. */
static inline mt_status mtg_ref(const mt_tensor *t, mt_tensor **out) {
  *out = mt_retain((mt_tensor *)t);
  return MT_OK;
}

/* ---- autograd state (meta.c) ---- */
mtg_meta *mtg_meta_of(const mt_tensor *t);      /* NULL when none */
mt_status mtg_meta_get(mt_tensor *t, mtg_meta **m); /* creates on demand */
/* The edge through which t receives its gradient: its grad_fn, or its
 * leaf's accumulate node (made on demand); node NULL if t needs no grad. */
mt_status mtg_edge_of(const mt_tensor *t, mtg_edge *e);
/* Sets t's history to (n, nr): t becomes a non-leaf requiring grad. */
mt_status mtg_set_history(mt_tensor *t, mtg_node *n, int nr);

/* ---- nodes (node.c) ---- */
/* True when grad mode is on and one of ts[0..n) (NULLs skipped) requires grad. */
bool mtg_any_requires_grad(const mt_tensor *const *ts, int n);
/* A new node for an op with inputs ins[0..nin) (NULL entries allowed:
 * no gradient) and nout outputs whose shapes are taken from outs when given.
 * Does not attach the outputs (mtg_attach does). */
mt_status mtg_node_new(const char *name, mtg_backward_fn fn, const mt_tensor *const *ins, int nin,
                       mt_tensor *const *outs, int nout, mtg_node **out);
/* Makes outs[0..nout) the node's outputs (their history); consumes the
 * caller's reference to n. */
mt_status mtg_attach(mtg_node *n, mt_tensor *const *outs, int nout);
mtg_node *mtg_node_retain(mtg_node *n);
void mtg_node_release(mtg_node *n);
/* Frees the saved tensors (after a backward without retain_graph). */
void mtg_node_release_saved(mtg_node *n);
/* Does input i of n need a gradient? */
static inline bool mtg_needs(const mtg_node *n, int i) { return n->next[i].node != NULL; }
/* Saves t in slot k of n (an input, or output `nr` of n when is_output). */
mt_status mtg_save(mtg_node *n, int k, const mt_tensor *t, bool is_output, int nr);
/* The saved tensor of slot k (borrowed from the scope: see mtg_scope), after
 * checking that it was not modified in place since it was saved. */
mt_status mtg_unpack(mtg_node *n, int k, mt_tensor **out);
/* Records a single-output op: makes the node, attaches out to it. Returns
 * the node (borrowed, owned by out) or NULL with *st set on failure. */
mtg_node *mtg_record1(const char *name, mtg_backward_fn fn, const mt_tensor *const *ins, int nin, mt_tensor *out,
                      mt_status *st);
/* Checks before an in-place op on t (also as out=): a leaf requiring grad
 * is an error while grad mode is on. */
mt_status mtg_check_inplace(const char *op, const mt_tensor *t);

/* ---- derivative scope (dscope.c) ----
 * Derivative code chains ops without checking each status: every helper
 * takes the scope, does nothing and returns NULL once an error happened,
 * and registers its result as a temporary that mtg_scope_end releases.
 * mtg_keep hands a temporary over to the caller (for gin[i]). */
typedef struct mtg_scope {
  mt_tensor *tmp[48];
  int n;
  mt_status st;
  mtg_node *node;
} mtg_scope;

void mtg_scope_begin(mtg_scope *s, mtg_node *node);
/* Releases temporaries; on error also the gin[0..nin) already set. */
mt_status mtg_scope_end(mtg_scope *s, mt_tensor **gin, int nin);
mt_tensor *mtg_keep(mtg_scope *s, mt_tensor *t);
mt_tensor *mtg_track(mtg_scope *s, mt_status st, mt_tensor *t);
/* The saved tensor k (version-checked). */
mt_tensor *mtg_d_saved(mtg_scope *s, int k);
mt_tensor *mtg_d_un(mtg_scope *s, mt_op op, const mt_tensor *x);
mt_tensor *mtg_d_bin(mtg_scope *s, mt_op op, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_mul(mtg_scope *s, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_add(mtg_scope *s, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_sub(mtg_scope *s, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_div(mtg_scope *s, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_neg(mtg_scope *s, const mt_tensor *a);
/* a * c for a number c (kept in a's dtype). */
mt_tensor *mtg_d_scale(mtg_scope *s, const mt_tensor *a, double c);
/* a + c for a number c. */
mt_tensor *mtg_d_addc(mtg_scope *s, const mt_tensor *a, double c);
/* A 0-dim tensor of value v in dtype dt (a wrapped number). */
mt_tensor *mtg_d_num(mtg_scope *s, double v, mt_dtype dt);
mt_tensor *mtg_d_zeros(mtg_scope *s, const mtg_meta_shape *m);
mt_tensor *mtg_d_zeros_like(mtg_scope *s, const mt_tensor *t);
mt_tensor *mtg_d_where(mtg_scope *s, const mt_tensor *c, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_cast(mtg_scope *s, const mt_tensor *t, mt_dtype dt);
/* Sums g down to the shape of m (undoing broadcasting) and casts it to
 * m's dtype: the gradient of an input that was broadcast. */
mt_tensor *mtg_d_sum_to(mtg_scope *s, const mt_tensor *g, const mtg_meta_shape *m);
mt_tensor *mtg_d_sum(mtg_scope *s, const mt_tensor *x, const int *dims, int ndims, bool keepdim);
/* Any op with an engine entry, recorded (mtg_call), one result. */
mt_tensor *mtg_d_call(mtg_scope *s, mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a);
mt_tensor *mtg_d_expand(mtg_scope *s, const mt_tensor *x, const int64_t *shape, int ndim);
mt_tensor *mtg_d_reshape(mtg_scope *s, const mt_tensor *x, const int64_t *shape, int ndim);
mt_tensor *mtg_d_transpose(mtg_scope *s, const mt_tensor *x, int d0, int d1);
mt_tensor *mtg_d_matmul(mtg_scope *s, const mt_tensor *a, const mt_tensor *b);
mt_tensor *mtg_d_unsqueeze(mtg_scope *s, const mt_tensor *x, int dim);
mt_tensor *mtg_d_contiguous(mtg_scope *s, const mt_tensor *x);
/* The gradient for input i of the scope's node: sums to its shape and
 * hands it over (NULL passes through). */
mt_tensor *mtg_d_grad_for(mtg_scope *s, int i, mt_tensor *g);

#endif
