/* index.c -- recorded index ops and their derivatives (see graph_index.h). */
#include "deriv.h"

static const mtg_deriv table[MT_NOPS] = {{0}};

const mtg_deriv *mtg_deriv_index(mt_op op) { return table[op].fn ? &table[op] : NULL; }
