/* graph_index.h -- recorded ops of the index family (graph/index.c), with the
 * engine's signatures; included by graph.h. */
#ifndef MTG_GRAPH_INDEX_H
#define MTG_GRAPH_INDEX_H
#endif
