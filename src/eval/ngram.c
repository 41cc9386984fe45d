/* ngram: open-addressing hash tables for n-gram matching and word interning. */
#include "eval/ngram.h"

#include "base/util.h"

#include <stdlib.h>
#include <string.h>

struct nmt_ngram_entry {
    uint64_t key;        /* (prefix id or root) << 32 | last symbol */
    uint32_t id;
    uint32_t generation; /* the entry is empty unless this is the table's generation */
};

/* The "prefix" of a unigram: one root per key kind, above any id a segment can reach. */
static inline uint64_t root(int slot0) { return (uint64_t)(UINT32_MAX - (uint32_t)slot0); }

static inline size_t bucket(const nmt_ngram_table *t, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29)) & t->mask;
}

size_t nmt_ngram_count(size_t len, int max_order) {
    size_t total = 0;
    for (int n = 1; n <= max_order && (size_t)n <= len; n++) total += len - (size_t)n + 1;
    return total;
}

static int grow_ids(nmt_ngram_table *t, size_t count) {
    if (count <= t->ids_cap) return 0;
    size_t cap = t->ids_cap ? t->ids_cap : 256;
    while (cap < count) cap *= 2;
    uint32_t **arrays[] = {&t->hyp_count, &t->ref_count, &t->ref_number, &t->ref_max};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) {
        uint32_t *grown = nmt_realloc(*arrays[k], cap * sizeof *grown);
        if (!grown) return -1;
        *arrays[k] = grown;
    }
    uint16_t *slot = nmt_realloc(t->slot, cap * sizeof *slot);
    if (!slot) return -1;
    t->slot = slot;
    t->ids_cap = cap;
    return 0;
}

int nmt_ngram_table_reset(nmt_ngram_table *table, size_t count) {
    size_t want = 16;
    while (want < 2 * count + 1) want *= 2;
    if (want > table->capacity) {
        free(table->entries);
        table->entries = nmt_calloc(want, sizeof *table->entries);
        table->capacity = table->entries ? want : 0;
        table->generation = 0;
        if (!table->entries) return -1;
    }
    if (grow_ids(table, count) < 0) return -1;
    table->mask = want - 1;
    table->ids = 0;
    if (++table->generation == 0) { /* wrapped: old stamps could look current */
        memset(table->entries, 0, table->capacity * sizeof *table->entries);
        table->generation = 1;
    }
    return 0;
}

void nmt_ngram_table_free(nmt_ngram_table *table) {
    free(table->entries);
    free(table->hyp_count);
    free(table->ref_count);
    free(table->ref_number);
    free(table->ref_max);
    free(table->slot);
    memset(table, 0, sizeof *table);
}

/* The id of `key`, or a new id (with zero counts) when absent and `insert` is set; UINT32_MAX when
 * absent otherwise. Capacity for the new ids was reserved by the reset. */
static inline uint32_t lookup(nmt_ngram_table *t, uint64_t key, int insert, int slot) {
    size_t at = bucket(t, key);
    for (;;) {
        nmt_ngram_entry *e = &t->entries[at];
        if (e->generation != t->generation) {
            if (!insert) return UINT32_MAX;
            uint32_t id = (uint32_t)t->ids++;
            *e = (nmt_ngram_entry){key, id, t->generation};
            t->hyp_count[id] = t->ref_count[id] = t->ref_number[id] = t->ref_max[id] = 0;
            t->slot[id] = (uint16_t)slot;
            return id;
        }
        if (e->key == key) return e->id;
        at = (at + 1) & t->mask;
    }
}

void nmt_ngram_table_add_hyp(nmt_ngram_table *table, const uint32_t *seq, size_t len, int max_order, int slot0) {
    for (size_t i = 0; i < len; i++) {
        uint64_t prefix = root(slot0);
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            uint32_t id = lookup(table, prefix << 32 | seq[i + (size_t)n - 1], 1, slot0 + n - 1);
            table->hyp_count[id]++;
            prefix = id;
        }
    }
}

void nmt_ngram_table_match_ref(nmt_ngram_table *table, const uint32_t *seq, size_t len, int max_order, int slot0,
                               uint32_t ref_number, nmt_ngram_clip clip, long *matched) {
    for (size_t i = 0; i < len; i++) {
        uint64_t prefix = root(slot0);
        for (int n = 1; n <= max_order && i + (size_t)n <= len; n++) {
            uint32_t id = lookup(table, prefix << 32 | seq[i + (size_t)n - 1], 0, 0);
            if (id == UINT32_MAX) break; /* not in the hypothesis, nor any extension */
            prefix = id;
            if (table->ref_number[id] != ref_number) {
                table->ref_number[id] = ref_number;
                table->ref_count[id] = 0;
            }
            uint32_t count = ++table->ref_count[id];
            if (clip == NMT_NGRAM_PER_REFERENCE) {
                if (count <= table->hyp_count[id]) matched[table->slot[id]]++;
            } else if (count > table->ref_max[id]) {
                table->ref_max[id] = count;
                if (count <= table->hyp_count[id]) matched[table->slot[id]]++;
            }
        }
    }
}

/* --- word interning ------------------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, len - i);
    h = (h ^ tail) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

void nmt_ngram_vocab_reset(nmt_ngram_vocab *vocab) {
    if (vocab->slots) memset(vocab->slots, 0, (vocab->mask + 1) * sizeof *vocab->slots);
    vocab->bytes_len = 0;
    vocab->count = 0;
}

static int vocab_grow_slots(nmt_ngram_vocab *vocab) {
    size_t cap = vocab->slots ? 2 * (vocab->mask + 1) : 256;
    uint32_t *slots = nmt_calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t w = 0; w < vocab->count; w++) {
        size_t at = (size_t)vocab->words[w].hash & (cap - 1);
        while (slots[at]) at = (at + 1) & (cap - 1);
        slots[at] = (uint32_t)w + 1;
    }
    free(vocab->slots);
    vocab->slots = slots;
    vocab->mask = cap - 1;
    return 0;
}

int nmt_ngram_vocab_id(nmt_ngram_vocab *vocab, const char *s, size_t len, uint32_t *id) {
    if (!vocab->slots || 2 * (vocab->count + 1) > vocab->mask + 1) {
        if (vocab_grow_slots(vocab) < 0) return -1;
    }
    uint64_t hash = hash_bytes(s, len);
    size_t at = (size_t)hash & vocab->mask;
    while (vocab->slots[at]) {
        const struct nmt_ngram_word *w = &vocab->words[vocab->slots[at] - 1];
        if (w->hash == hash && w->len == len && memcmp(vocab->bytes + w->offset, s, len) == 0) {
            *id = vocab->slots[at] - 1;
            return 0;
        }
        at = (at + 1) & vocab->mask;
    }
    if (vocab->count == vocab->words_cap) {
        size_t cap = vocab->words_cap ? 2 * vocab->words_cap : 128;
        struct nmt_ngram_word *words = nmt_realloc(vocab->words, cap * sizeof *words);
        if (!words) return -1;
        vocab->words = words;
        vocab->words_cap = cap;
    }
    if (vocab->bytes_len + len > vocab->bytes_cap) {
        size_t cap = vocab->bytes_cap ? vocab->bytes_cap : 1024;
        while (cap < vocab->bytes_len + len) cap *= 2;
        char *bytes = nmt_realloc(vocab->bytes, cap);
        if (!bytes) return -1;
        vocab->bytes = bytes;
        vocab->bytes_cap = cap;
    }
    memcpy(vocab->bytes + vocab->bytes_len, s, len);
    vocab->words[vocab->count] = (struct nmt_ngram_word){hash, vocab->bytes_len, (uint32_t)len};
    vocab->bytes_len += len;
    vocab->slots[at] = (uint32_t)vocab->count + 1;
    *id = (uint32_t)vocab->count++;
    return 0;
}

void nmt_ngram_vocab_free(nmt_ngram_vocab *vocab) {
    free(vocab->slots);
    free(vocab->bytes);
    free(vocab->words);
    memset(vocab, 0, sizeof *vocab);
}
