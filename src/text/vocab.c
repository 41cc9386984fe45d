/* vocab: the one place that lays out source, decoder-input and target rows (vocab.h). */
#include "text/vocab.h"

#include <string.h>

void nmt_vocab_row(nmt_vocab_row_kind kind, const int32_t *pieces, int len, int32_t *row, int width) {
    int at = 0;
    if (kind == NMT_ROW_DECODER_INPUT) row[at++] = NMT_BOS;
    if (len > 0) memcpy(row + at, pieces, (size_t)len * sizeof *row);
    at += len;
    if (kind == NMT_ROW_SOURCE || kind == NMT_ROW_TARGET) row[at++] = NMT_EOS;
    while (at < width) row[at++] = NMT_PAD;
}
