/* graph_movement.h -- recorded ops of the movement family (graph/movement.c), with the
 * engine's signatures; included by graph.h. */
#ifndef MTG_GRAPH_MOVEMENT_H
#define MTG_GRAPH_MOVEMENT_H
#endif
