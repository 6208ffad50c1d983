/* derivatives.c -- the derivative registry: for every op in tensor/ops.def
 * marked MT_F_DIFF, the family table that holds its derivative, or an
 * explicit entry saying why it has none. tests/graph/test_gradcheck.lua
 * walks the registry through mtg_derivative_status. */
#include <ctype.h>
#include <string.h>

#include "deriv.h"

static const mtg_deriv *(*const families[])(mt_op) = {mtg_deriv_ew,     mtg_deriv_view,     mtg_deriv_reduce,
                                                       mtg_deriv_linalg, mtg_deriv_movement, mtg_deriv_index,
                                                       mtg_deriv_nn,     mtg_deriv_attention, mtg_deriv_vision,
                                                       mtg_deriv_fft,
                                                       mtg_deriv_audio};

const mtg_deriv *mtg_deriv_of(mt_op op) {
  static const mtg_deriv *cache[MT_NOPS];
  static bool filled;
  if (!filled) {
    for (int o = 0; o < MT_NOPS; o++)
      for (size_t f = 0; f < sizeof families / sizeof *families && !cache[o]; f++) cache[o] = families[f]((mt_op)o);
    filled = true;
  }
  return cache[op];
}

/* Differentiable ops that have no derivative, and why. */
static const struct {
  mt_op op;
  const char *why;
} none[] = {
    {MT_OP_batch_norm_backward, "not needed: under create_graph batch_norm's derivative is written with recorded "
                                "ops (graph/nn.c), so double backward never reaches this op"},
    {MT_OP_layer_norm_backward, "not needed: under create_graph layer_norm's derivative is written with recorded "
                                "ops (graph/nn.c), so double backward never reaches this op"},
    {MT_OP_group_norm_backward, "not needed: under create_graph group_norm's derivative is written with recorded "
                                "ops (graph/nn.c), so double backward never reaches this op"},
    {MT_OP_sdpa_flash_backward, "not needed: under create_graph sdpa_flash's derivative is written with recorded "
                                "math ops (graph/attention.c), so double backward never reaches this op"},
    {MT_OP_sdpa_cudnn_backward, "not needed: under create_graph sdpa_cudnn's derivative is written with recorded "
                                "math ops (graph/attention.c), so double backward never reaches this op"},
    {MT_NOPS, NULL}, /* (end) */
};

/* An op listed above is 0 even when recorded: its table row's backward
 * only says it has no derivative (the fused attention backward ops). */
int mtg_derivative_status(mt_op op, const char **why) {
  for (size_t i = 0; none[i].why; i++)
    if (none[i].op == op) {
      if (why) *why = none[i].why;
      return 0;
    }
  return mtg_deriv_of(op) ? 1 : -1;
}

const char *mtg_backward_name(mt_op op) {
  static char names[MT_NOPS][48];
  if (!names[op][0]) {
    const char *src = mt_ops[op].name;
    size_t j = 0;
    bool up = true;
    for (size_t i = 0; src[i] && j < sizeof names[op] - 12; i++) {
      if (src[i] == '_') {
        up = true;
        continue;
      }
      names[op][j++] = up ? (char)toupper((unsigned char)src[i]) : src[i];
      up = false;
    }
    memcpy(names[op] + j, "Backward0", 10);
  }
  return names[op];
}
