/* movement.c -- recorded movement ops and their derivatives (see graph_movement.h). */
#include "deriv.h"

static const mtg_deriv table[MT_NOPS] = {{0}};

const mtg_deriv *mtg_deriv_movement(mt_op op) { return table[op].fn ? &table[op] : NULL; }
