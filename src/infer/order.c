/* order: sorting sentences by length for batching (order.h). */
#include "infer/order.h"

#include <stdlib.h>

static int by_length(const void *pa, const void *pb) {
    const nmt_order_entry *a = pa, *b = pb;
    if (a->length != b->length) return a->length < b->length ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

void nmt_order_sort(nmt_order_entry *entries, int count) {
    if (count > 1) qsort(entries, (size_t)count, sizeof *entries, by_length);
}
