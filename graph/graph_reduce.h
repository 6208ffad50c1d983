/* graph_reduce.h -- recorded ops of the reduce family (graph/reduce.c), with the
 * engine's signatures; included by graph.h. */
#ifndef MTG_GRAPH_REDUCE_H
#define MTG_GRAPH_REDUCE_H
#endif
