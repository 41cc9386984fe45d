/* Tests of src/serve/inline_tags.c: inline tags carried to the target words aligned to the words they
 * wrapped (in order, reordered, nested, unaligned, void, unclosed, opened before the block, without
 * alignment), and, on random markup and alignments, every tag once and properly nested. */
#include "serve/inline_tags.h"

#include "testing.h"

enum { MAX_TAGS = 64 };

/* A block's source with its markup taken out: the text and the tags, as serve's segmenter records them
 * (parsed here by a small reader: <x ...> opens, </x> closes the nearest open x or, when none is, closes
 * an element opened before the block; <x/> is void; what is open at the end stays unclosed). */
typedef struct block {
    char text[512];
    nmt_serve_inline_tag tags[MAX_TAGS];
    int n;
} block;

static void read_block(const char *html, block *b) {
    memset(b, 0, sizeof *b);
    size_t len = 0;
    int stack[MAX_TAGS], depth = 0;
    char names[MAX_TAGS][16];
    for (const char *p = html; *p;) {
        if (*p != '<') {
            b->text[len++] = *p++;
            continue;
        }
        const char *end = strchr(p, '>') + 1;
        char name[16] = "";
        const char *q = p + 1 + (p[1] == '/');
        size_t k = 0;
        while (q[k] != ' ' && q[k] != '>' && q[k] != '/' && k < 15) name[k] = q[k], k++;
        name[k] = '\0';
        nmt_serve_inline_tag *t = &b->tags[b->n];
        if (p[1] == '/') {
            int d = depth - 1;
            while (d >= 0 && strcmp(names[d], name) != 0) d--;
            if (d >= 0) { /* closes it (and leaves those inside it unclosed) */
                b->tags[stack[d]].end = len;
                b->tags[stack[d]].close = p;
                b->tags[stack[d]].close_len = (size_t)(end - p);
                for (int e = d + 1; e < depth; e++) b->tags[stack[e]].end = len;
                depth = d;
            } else { /* opened before the block: it spans from its parent's start */
                t->parent = depth ? stack[depth - 1] : -1;
                t->begin = depth ? b->tags[stack[depth - 1]].begin : 0;
                t->end = len;
                t->close = p;
                t->close_len = (size_t)(end - p);
                b->n++;
            }
        } else {
            t->parent = depth ? stack[depth - 1] : -1;
            t->begin = t->end = len;
            t->open = p;
            t->open_len = (size_t)(end - p);
            if (end[-2] != '/') {
                strcpy(names[depth], name);
                stack[depth++] = b->n;
            }
            b->n++;
        }
        p = end;
    }
    b->text[len] = '\0';
    for (int d = 0; d < depth; d++) b->tags[stack[d]].end = len; /* unclosed: to the end */
}

/* Places the tags of `html` on target by pairs ("0-0 1-2", or NULL) and checks the result. */
static void places(const char *html, const char *target, const char *alignment, const char *want) {
    block b;
    read_block(html, &b);
    int pairs[128], n = 0;
    for (const char *p = alignment; p && *p;) {
        char *next;
        pairs[2 * n] = (int)strtol(p, &next, 10);
        pairs[2 * n + 1] = (int)strtol(next + 1, &next, 10);
        n++;
        p = next + strspn(next, " ");
    }
    nmt_strbuf out = {0};
    ck_assert_int_eq(nmt_serve_inline_tags(b.text, b.tags, b.n, target, alignment ? pairs : NULL, n, &out), 0);
    ck_assert_msg(strcmp(out.data, want) == 0, "'%s' -> '%s': got '%s', want '%s'", html, target, out.data, want);
    nmt_strbuf_free(&out);
}

START_TEST(test_places) {
    /* The tag goes around the word that translates the one it wrapped; punctuation stays outside. */
    places("I drink <b>tea</b>.", "Ich trinke Tee.", "0-0 1-1 2-2", "Ich trinke <b>Tee</b>.");
    places("<b>\"Tea</b>\" he said", "\"Tee\" sagte er", "0-0 1-2 2-1", "<b>\"Tee</b>\" sagte er");
    /* Reordered words take their tags along; attributes are kept as they were. */
    places("the <b>red</b> <i class=\"x\">car</i>", "la voiture rouge", "0-0 1-2 2-1",
           "la <i class=\"x\">voiture</i> <b>rouge</b>");
    /* A tag over several words covers their translations, from the first to the last. */
    places("<a href=\"/h\">the big house</a> stands", "das gro\xc3\x9f" "e Haus steht", "0-0 1-1 2-2 3-3",
           "<a href=\"/h\">das gro\xc3\x9f" "e Haus</a> steht");
    /* Nested: the child inside its parent. */
    places("<a href=x>the <b>big</b> house</a> stands", "das gro\xc3\x9f" "e Haus steht", "0-0 1-1 2-2 3-3",
           "<a href=x>das <b>gro\xc3\x9f" "e</b> Haus</a> steht");
    places("<a>the <b>big</b> house</a> is here", "la maison grande est ici", "0-0 1-2 2-1 3-3 4-4",
           "<a>la maison <b>grande</b></a> est ici");
    /* Siblings aligned to the same word do not overlap: the second follows the first. */
    places("<b>A</b> <i>B</i> C", "X Y", "0-0 1-0 2-1", "<b>X</b><i></i> Y");
    /* A tag whose words align to nothing keeps its place among its neighbours. */
    places("<b>very</b> good", "gut", "1-0", "<b></b>gut");
    places("so <b>very</b> good", "so gut", "0-0 2-1", "so<b></b> gut");
    /* Void elements stand after the translation of the word before them. */
    places("Click <img src=a/> here", "Klicken Sie hier", "0-0 0-1 1-2", "Klicken Sie<img src=a/> hier");
    places("<br/>Hello", "Hallo", "0-0", "<br/>Hallo");
    /* Unclosed, closed by an ancestor, or opened before the block: only the tags there are. */
    places("I <b>drink tea", "Ich trinke Tee", "0-0 1-1 2-2", "Ich <b>trinke Tee");
    places("drink</b> tea", "trinke Tee", "0-0 1-1", "trinke</b> Tee");
    places("<a>x <b>y</a> z", "X Y Z", "0-0 1-1 2-2", "<a>X <b>Y</a> Z");
    /* Without an alignment, words are matched by their relative places. */
    places("one <b>two</b> three four", "eins zwei drei vier", NULL, "eins <b>zwei</b> drei vier");
    places("one <b>two</b> three four", "A B", NULL, "A<b></b> B");
    /* The translation is escaped; pairs naming no word are skipped; empty texts keep their tags. */
    places("<b>a</b> & b", "x < y & z", "0-0 7-1 0-9 -1-0", "<b>x</b> &lt; y &amp; z");
    places("<b>tea</b>", "", "0-0", "<b></b>");
    places("<b></b>", "", NULL, "<b></b>");
}
END_TEST

/* A small deterministic generator for the random cases. */
static unsigned next_random(unsigned *state) {
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

/* Random blocks of words and tags <tK>...</tK> (balanced, or not) and random alignments: every tag of
 * the input appears once in the output, the text without the tags is the target, and balanced input
 * gives properly nested output. */
START_TEST(test_random) {
    unsigned state = 7;
    for (int round = 0; round < 2000; round++) {
        const int balanced = round % 2 == 0;
        char html[1024] = "", piece[32];
        int open[16], depth = 0, tags = 0;
        const int items = 1 + (int)(next_random(&state) % 20);
        for (int it = 0; it < items && tags < 30; it++) {
            const unsigned r = next_random(&state) % 6;
            if (r == 0 && depth < 16) {
                snprintf(piece, sizeof piece, "<t%d>", tags);
                open[depth++] = tags++;
            } else if (r == 1 && (depth > 0 || !balanced)) {
                if (depth > 0) snprintf(piece, sizeof piece, "</t%d>", open[--depth]);
                else snprintf(piece, sizeof piece, "</t%d>", tags++); /* opened before the block */
            } else if (r == 2) {
                snprintf(piece, sizeof piece, "<t%d/>", tags++);
            } else {
                snprintf(piece, sizeof piece, "%sw%d", next_random(&state) % 3 ? " " : "", it);
            }
            strcat(html, piece);
        }
        while (balanced && depth > 0) {
            snprintf(piece, sizeof piece, "</t%d>", open[--depth]);
            strcat(html, piece);
        }
        char target[256] = "";
        const int target_words = (int)(next_random(&state) % 8);
        for (int w = 0; w < target_words; w++) {
            snprintf(piece, sizeof piece, "%sv%d", w ? " " : "", w);
            strcat(target, piece);
        }
        int pairs[64], n = (int)(next_random(&state) % 32);
        for (int p = 0; p < 2 * n; p++) pairs[p] = (int)(next_random(&state) % 12);
        block b;
        read_block(html, &b);
        nmt_strbuf out = {0};
        ck_assert_int_eq(nmt_serve_inline_tags(b.text, b.tags, b.n, target, round % 5 ? pairs : NULL, n, &out), 0);
        /* Each tag of the input once, in a properly nested order when the input was. */
        char text[256] = "";
        int stack[64], top = 0, seen_open[64] = {0}, seen_close[64] = {0};
        for (const char *p = out.data ? out.data : ""; *p;) {
            if (*p != '<') {
                strncat(text, p++, 1);
                continue;
            }
            const int closing = p[1] == '/', k = atoi(p + 2 + closing);
            const char *end = strchr(p, '>');
            ck_assert_ptr_nonnull(end);
            if (closing) {
                seen_close[k]++;
                if (balanced) ck_assert_msg(top > 0 && stack[--top] == k, "'%s' -> '%s'", html, out.data);
            } else {
                seen_open[k]++;
                if (end[-1] != '/' && balanced) stack[top++] = k;
            }
            p = end + 1;
        }
        ck_assert_str_eq(text, target);
        for (int k = 0; k < b.n; k++) {
            char name[16];
            const int id = atoi((b.tags[k].open_len ? b.tags[k].open : b.tags[k].close) + 2 + !b.tags[k].open_len);
            snprintf(name, sizeof name, "t%d", id);
            ck_assert_msg(seen_open[id] == (b.tags[k].open_len > 0), "'%s' -> '%s': <%s> %d times", html, out.data,
                          name, seen_open[id]);
            ck_assert_msg(seen_close[id] == (b.tags[k].close_len > 0), "'%s' -> '%s': </%s> %d times", html,
                          out.data, name, seen_close[id]);
        }
        nmt_strbuf_free(&out);
    }
}
END_TEST

START_TEST(test_piece_words) {
    const char *pieces[] = {"\xe2\x96\x81I", "\xe2\x96\x81" "dr", "ink", "\xe2\x96\x81" "te", "a", "."};
    int word[6];
    ck_assert_int_eq(nmt_serve_inline_piece_words(pieces, 6, word), 3);
    const int want[] = {0, 1, 1, 2, 2, 2};
    ck_assert_mem_eq(word, want, sizeof want);
    const char *glued[] = {"ab", "\xe2\x96\x81" "c"}; /* a first piece without the marker starts a word too */
    ck_assert_int_eq(nmt_serve_inline_piece_words(glued, 2, word), 2);
    ck_assert_int_eq(nmt_serve_inline_piece_words(glued, 0, word), 0);
}
END_TEST

typedef struct attempt {
    block b;
} attempt;

static int place_attempt(void *context) {
    attempt *a = context;
    const int pairs[] = {0, 1, 1, 0, 2, 2};
    nmt_strbuf out = {0};
    const int rc = nmt_serve_inline_tags(a->b.text, a->b.tags, a->b.n, "x y z", pairs, 3, &out);
    nmt_strbuf_free(&out);
    return rc;
}

START_TEST(test_allocation_failures) {
    attempt a;
    read_block("<a>one <b>two</b></a> three", &a.b);
    ck_assert_int_gt(nmt_test_alloc_sweep(place_attempt, &a), 2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("inline_tags");
    TCase *tc = tcase_create("inline_tags");
    tcase_add_test(tc, test_places);
    tcase_add_test(tc, test_random);
    tcase_add_test(tc, test_piece_words);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
