/* fuzz_serve_segment: the server's cutting of texts into segments (plain text and HTML) and their
 * joining back, on arbitrary bytes.
 *
 * Input: the first byte's bits choose HTML (1), sentence splitting (2) and a word alignment given with
 * each segment (4: its words as its pieces, word k aligned to word k), and its fourth and fifth bits
 * the language of the sentence rules (en, de, cs, fr); the rest, cut at NUL bytes, are the texts. Properties besides "never crashes, never leaks": cutting succeeds (or fails
 * with a message: too many segments, elements nested too deep); segments partition the texts
 * (first[] ascending from 0 to count); and joining every segment as its own translation gives texts
 * that cut into exactly the same segments again -- so the glue and tail put back exactly the markup
 * and separators around each segment, and HTML escaping and decoding are each other's inverse.
 */
#include "fuzz.h"
#include "serve/segment.h"

enum { MAX_TEXTS = 64 };

/* Cuts n texts into *s, checking the partition; 0, or -1 when refused. */
static int cut(const char *const *texts, int n, int sentences, int html, const char *lang, nmt_serve_segments *s) {
    if (nmt_serve_segment(texts, n, sentences, html, lang, s) < 0) {
        FUZZ_CHECK(nmt_error()[0] != '\0', "a refusal without a message");
        nmt_serve_segments_free(s);
        return -1;
    }
    FUZZ_CHECK(s->first[0] == 0 && s->first[n] == s->count, "first[] spans %d..%d of %d", s->first[0], s->first[n],
               s->count);
    for (int i = 0; i < n; i++) FUZZ_CHECK(s->first[i] <= s->first[i + 1], "first[] descends at %d", i);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int html = data[0] & 1, sentences = (data[0] >> 1) & 1, aligned = (data[0] >> 2) & 1;
    static const char *const languages[] = {"en", "de", "cs", "fr"};
    const char *lang = languages[(data[0] >> 3) & 3];
    char *copy = malloc(size);
    FUZZ_CHECK(copy != NULL, "malloc");
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = '\0';
    const char *texts[MAX_TEXTS];
    int n = 0;
    for (size_t at = 0; at < size && n < MAX_TEXTS; at += strlen(copy + at) + 1) texts[n++] = copy + at;

    nmt_serve_segments s;
    if (cut(texts, n, sentences, html, lang, &s) < 0) {
        free(copy);
        return 0;
    }
    nmt_serve_text *parts = calloc((size_t)s.count + 1, sizeof *parts), *joined = calloc((size_t)n, sizeof *joined);
    nmt_serve_hypothesis *hyps = calloc((size_t)s.count + 1, sizeof *hyps);
    FUZZ_CHECK(parts && joined && hyps, "calloc");
    size_t words = 1; /* the identity alignment: the pieces are the words */
    for (int k = 0; k < s.count; k++) words += strlen(s.segments[k]) / 2 + 1;
    int *identity = malloc(2 * words * sizeof *identity), *ramp = malloc(words * sizeof *ramp);
    FUZZ_CHECK(identity && ramp, "malloc");
    for (size_t w = 0; w < words; w++) identity[2 * w] = identity[2 * w + 1] = ramp[w] = (int)w;
    for (int k = 0; k < s.count; k++) {
        hyps[k] = (nmt_serve_hypothesis){(char *)s.segments[k], 0, 0};
        parts[k] = (nmt_serve_text){&hyps[k], 1, NULL, 0, 0, 0, NULL, NULL};
        if (!aligned) continue;
        int count = 0;
        for (const char *p = s.segments[k]; *p; p++) count += *p != ' ' && (p == s.segments[k] || p[-1] == ' ');
        parts[k] = (nmt_serve_text){&hyps[k], 1, identity, count, count, count, ramp, ramp};
    }
    FUZZ_CHECK(nmt_serve_join(&s, n, parts, joined) == 0, "join: %s", nmt_error());
    const char *again_texts[MAX_TEXTS];
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(joined[i].count == 1, "text %d joined into %d hypotheses", i, joined[i].count);
        again_texts[i] = joined[i].hyps[0].text;
    }
    nmt_serve_segments again;
    FUZZ_CHECK(cut(again_texts, n, sentences, html, lang, &again) == 0, "the joined texts are refused: %s", nmt_error());
    FUZZ_CHECK(again.count == s.count, "%d segments, then %d", s.count, again.count);
    for (int k = 0; k < s.count; k++)
        FUZZ_CHECK(strcmp(again.segments[k], s.segments[k]) == 0, "segment %d: '%.80s', then '%.80s'", k,
                   s.segments[k], again.segments[k]);
    for (int i = 0; i <= n; i++) FUZZ_CHECK(again.first[i] == s.first[i], "text %d starts elsewhere", i);
    nmt_serve_segments_free(&again);
    for (int i = 0; i < n; i++) nmt_serve_text_free(&joined[i]);
    free(joined);
    free(parts);
    free(hyps);
    free(identity);
    free(ramp);
    nmt_serve_segments_free(&s);
    free(copy);
    return 0;
}
