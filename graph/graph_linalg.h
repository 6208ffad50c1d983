/* graph_linalg.h -- recorded ops of the linalg family (graph/linalg.c), with the
 * engine's signatures; included by graph.h. */
#ifndef MTG_GRAPH_LINALG_H
#define MTG_GRAPH_LINALG_H
#endif
