/* Tests of src/serve/segment.c and src/serve/html.c: texts cut into lines and sentences where the rules
 * say (and nowhere else), and translations joined back with the separators, summed scores and offset
 * alignments; HTML cut into its stretches of text (the untranslated elements, raw text, comments and
 * attributes left alone, character references decoded), and joined back around the same markup with
 * the translations escaped. */
#include "serve/html.h"
#include "serve/prefixes.h"
#include "serve/segment.h"

#include "testing.h"

/* Cuts one text by the rules of `lang` and checks the segments, written "a|b|c" with the separator
 * before each: "|n|" for "\n", "|rn|" for "\r\n", "|s|" for " ". */
static void cuts_in(const char *lang, const char *text, int sentences, const char *want) {
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(&text, 1, sentences, 0, lang, &s), 0);
    char got[512] = "";
    for (int i = 0; i < s.count; i++) {
        if (i) strcat(got, strcmp(s.glue[i], "\n") == 0 ? "|n|" : strcmp(s.glue[i], "\r\n") == 0 ? "|rn|" : "|s|");
        strcat(got, s.segments[i]);
    }
    ck_assert_msg(strcmp(got, want) == 0, "'%s': got '%s', want '%s'", text, got, want);
    ck_assert_int_eq(s.first[0], 0);
    ck_assert_int_eq(s.first[1], s.count);
    nmt_serve_segments_free(&s);
}

static void cuts(const char *text, int sentences, const char *want) { cuts_in(NULL, text, sentences, want); }

START_TEST(test_cuts) {
    cuts("A man sits. A dog runs.", 1, "A man sits.|s|A dog runs.");
    cuts("A man sits. A dog runs.", 0, "A man sits. A dog runs.");
    cuts("Stop!  Who? \"Me,\" he said.", 1, "Stop!|s|Who?|s|\"Me,\" he said.");
    cuts("He said \"go.\" Then 3 left.", 1, "He said \"go.\"|s|Then 3 left.");
    cuts("e.g. this, 3.5 m, and Mr. smith.", 1, "e.g. this, 3.5 m, and Mr. smith.");
    cuts("Wait\xe2\x80\xa6 \xe2\x80\x9cYes\xe2\x80\x9d (sure).", 1, "Wait\xe2\x80\xa6|s|\xe2\x80\x9cYes\xe2\x80\x9d (sure).");
    cuts("one\r\ntwo. Three\n\nfour", 1, "one|rn|two.|s|Three|n||n|four");
    cuts("", 1, "");
    cuts("end. ", 1, "end. ");
    cuts(". A", 1, ".|s|A");
    const char *texts[] = {"a. B", "c", "d\ne"};
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(texts, 3, 1, 0, NULL, &s), 0);
    ck_assert_int_eq(s.count, 5);
    ck_assert_int_eq(s.first[1], 2);
    ck_assert_int_eq(s.first[2], 3);
    ck_assert_int_eq(s.first[3], 5);
    ck_assert_str_eq(s.glue[2], "");
    nmt_serve_segments_free(&s);
    /* Too many segments for one request. */
    char *many = malloc(2 * NMT_SERVE_MAX_SEGMENTS + 3);
    for (int i = 0; i < NMT_SERVE_MAX_SEGMENTS + 1; i++) memcpy(many + 2 * i, "a\n", 2);
    many[2 * NMT_SERVE_MAX_SEGMENTS + 2] = '\0';
    const char *one = many;
    ck_assert_int_eq(nmt_serve_segment(&one, 1, 0, 0, NULL, &s), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "more than 100000 lines and sentences"));
    nmt_serve_segments_free(&s);
    free(many);
}
END_TEST

/* Moses' nonbreaking-prefix rule with each language's lists. */
START_TEST(test_prefixes) {
    /* Titles, initials, acronyms and Latin abbreviations do not end a sentence; other words do. */
    cuts_in("en", "Dr. Smith met Mr. J. R. Jones. They talked.", 1, "Dr. Smith met Mr. J. R. Jones.|s|They talked.");
    cuts_in("en", "It was made in the U.S. Then it sold. See e.g. Table 2.", 1,
            "It was made in the U.S. Then it sold.|s|See e.g. Table 2.");
    /* Numeric-only prefixes hold before a number only. */
    cuts_in("en", "See No. 5 here. Read pp. 3-4. I said no. Then left.", 1,
            "See No. 5 here.|s|Read pp. 3-4.|s|I said no.|s|Then left.");
    /* German: abbreviations, ordinal dates, numeric S. and Nr.; capitals beyond A-Z start a sentence. */
    cuts_in("de", "Das ist z.B. ein Test. Am 3. Oktober kam Hr. Meier. Siehe S. 125. \xc3\x84pfel sind rot.", 1,
            "Das ist z.B. ein Test.|s|Am 3. Oktober kam Hr. Meier.|s|Siehe S. 125.|s|\xc3\x84pfel sind rot.");
    cuts_in("en", "Am 3. Oktober kam er.", 1, "Am 3.|s|Oktober kam er.");
    cuts_in("fr", "Mme. Curie et M. Dupont. Ils partent. \xc3\x89t\xc3\xa9 1990.", 1,
            "Mme. Curie et M. Dupont.|s|Ils partent.|s|\xc3\x89t\xc3\xa9 1990.");
    cuts_in("cs", "Ing. Novák a prof. Dvořák přišli. Viz str. 125. \xc4\x8c" "as letí.", 1,
            "Ing. Novák a prof. Dvořák přišli.|s|Viz str. 125.|s|\xc4\x8c" "as letí.");
    cuts_in("es", "La Sra. García llegó. \xc2\xbfQué tal? Bien.", 1, "La Sra. García llegó.|s|\xc2\xbfQué tal?|s|Bien.");
    cuts_in("it", "Il Dott. Rossi e il Sig. Bianchi. Poi basta.", 1, "Il Dott. Rossi e il Sig. Bianchi.|s|Poi basta.");
    cuts_in("pt", "O Sr. Silva e a Dra. Costa. Depois.", 1, "O Sr. Silva e a Dra. Costa.|s|Depois.");
    cuts_in("nl", "Dhr. Jansen bijv. Kwam. Zie blz. 7. Dat is alles.", 1,
            "Dhr. Jansen bijv. Kwam.|s|Zie blz. 7.|s|Dat is alles.");
    /* Region subtags and case do not matter; an unknown language gets English's lists. */
    cuts_in("DE-at", "Siehe S. 125. Gut.", 1, "Siehe S. 125.|s|Gut.");
    cuts_in("xx", "Mr. X. Y. came. Then Dr. Z.", 1, "Mr. X. Y. came.|s|Then Dr. Z.");
    /* A closing quote between the word and its '.' makes it no prefix; '!' and '?' always end. */
    cuts_in("en", "He said \"Dr\". Then left. Dr! Who?", 1, "He said \"Dr\".|s|Then left.|s|Dr!|s|Who?");
    ck_assert_str_eq(nmt_serve_prefixes_language(nmt_serve_prefixes_of("pt-BR")), "pt");
    ck_assert_str_eq(nmt_serve_prefixes_language(nmt_serve_prefixes_of(NULL)), "en");
    ck_assert_int_eq(nmt_serve_prefixes_find(nmt_serve_prefixes_of("en"), "No", 2), NMT_SERVE_PREFIX_NUMERIC);
    ck_assert_int_eq(nmt_serve_prefixes_find(nmt_serve_prefixes_of("en"), "dr", 2), NMT_SERVE_PREFIX_NONE);
}
END_TEST

/* Line breaks and blank lines come back exactly as they were. */
START_TEST(test_breaks_kept) {
    const char *text = "One. Two\r\n\r\nThree\n\nFour\r";
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(&text, 1, 1, 0, "en", &s), 0);
    nmt_serve_hypothesis h[8];
    nmt_serve_text parts[8];
    ck_assert_int_le(s.count, 8);
    for (int i = 0; i < s.count; i++) {
        h[i] = (nmt_serve_hypothesis){(char *)s.segments[i], 0, 0};
        parts[i] = (nmt_serve_text){&h[i], 1, NULL, 0, 0, 0, NULL, NULL};
    }
    nmt_serve_text out;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_str_eq(out.hyps[0].text, text);
    nmt_serve_text_free(&out);
    nmt_serve_segments_free(&s);
}
END_TEST

START_TEST(test_join) {
    const char *text = "A b. C d\ne";
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(&text, 1, 1, 0, NULL, &s), 0);
    ck_assert_int_eq(s.count, 3);
    nmt_serve_hypothesis h0[] = {{"x y", -1, -2}, {"x z", -3, -4}}, h1[] = {{"w", -0.5, -1}, {"v", -2, -2}, {"u", -9, -9}},
                         h2[] = {{"", 0, 0}, {"t", -1, -1}};
    int p0[] = {0, 0, 1, 1}, p1[] = {1, 0};
    nmt_serve_text parts[3] = {{h0, 2, p0, 2, 3, 2, NULL, NULL}, {h1, 3, p1, 1, 2, 1, NULL, NULL}, {h2, 2, NULL, 0, 1, 0, NULL, NULL}};
    nmt_serve_text out;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_int_eq(out.count, 2);
    ck_assert_str_eq(out.hyps[0].text, "x y w\n");
    ck_assert_str_eq(out.hyps[1].text, "x z v\nt");
    ck_assert_double_eq(out.hyps[0].score, -1.5);
    ck_assert_double_eq(out.hyps[1].logprob, -7);
    ck_assert_ptr_null(out.pairs); /* one part without alignment */
    nmt_serve_text_free(&out);
    parts[2].pairs = p1;
    parts[2].pair_count = 0;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_int_eq(out.pair_count, 3);
    const int want[] = {0, 0, 1, 1, 4, 2}; /* the second sentence's pair moved by 3 source, 2 target pieces */
    ck_assert_mem_eq(out.pairs, want, sizeof want);
    ck_assert_int_eq(out.source_pieces, 6);
    ck_assert_int_eq(out.target_pieces, 3);
    nmt_serve_text_free(&out);
    nmt_serve_segments_free(&s);
}
END_TEST

/* Cuts one HTML text and checks its segments and glue, written "[glue]segment" in order, then "[tail]". */
static void cuts_html(const char *html, const char *want) {
    nmt_serve_segments s;
    ck_assert_msg(nmt_serve_segment(&html, 1, 1, 1, NULL, &s) == 0, "%s", nmt_error());
    char got[1024] = "";
    for (int i = 0, k = 0; i < s.count; i++) { /* a block's first segment: the markup before the block */
        strcat(got, "[");
        strcat(got, k < s.block_count && s.blocks[k].first == i ? s.blocks[k++].before : s.glue[i]);
        strcat(got, "]");
        strcat(got, s.segments[i]);
    }
    strcat(got, "[");
    strcat(got, s.tail[0]);
    strcat(got, "]");
    ck_assert_msg(strcmp(got, want) == 0, "'%s': got '%s', want '%s'", html, got, want);
    nmt_serve_segments_free(&s);
}

START_TEST(test_html_cuts) {
    /* A block's inline elements stay in it: its text is cut into sentences whole. */
    cuts_html("<p>A man <b>sits</b>. A dog runs.</p>", "[<p>]A man sits.[ ]A dog runs.[</p>]");
    cuts_html("Hello <br>world", "[]Hello[ <br>]world[]");
    /* Untranslated elements, raw text, comments, attributes and doctype stay in the markup. */
    cuts_html("<!DOCTYPE html><title>Dogs</title><script>if (a < b) x = \"<p>hi</p>\";</script>"
              "<p title=\"A > B\" class='x notranslate'>Skip <i>me</i></p><!-- a comment -->"
              "<code>int x;</code><span translate=no>no</span><div>Yes</div>",
              "[<!DOCTYPE html><title>]Dogs[</title><script>if (a < b) x = \"<p>hi</p>\";</script>"
              "<p title=\"A > B\" class='x notranslate'>Skip <i>me</i></p><!-- a comment -->"
              "<code>int x;</code><span translate=no>no</span><div>]Yes[</div>]");
    /* Nested untranslated elements end where they end; an end tag whose start came before the block
     * ends it (it may close elements around the block). */
    cuts_html("<code><code>a</code>b</code>c</i>d", "[]c[</i>]d[]");
    cuts_html("<div><code>a</code></div><p>x <kbd>b</kbd></p>", "[<div><code>a</code></div><p>]x[</p>]");
    /* Character references decoded, white space collapsed (kept in <pre>), no-word stretches left. */
    cuts_html("<p>Fish &amp; chips\n   &#233;t&#xE9; &bogus; &nbsp;</p><p> &nbsp; | </p>",
              "[<p>]Fish & chips \xc3\xa9t\xc3\xa9 &bogus; \xc2\xa0[</p><p> &nbsp; | </p>]");
    cuts_html("<pre>line one\nline two</pre>", "[<pre>]line one[\n]line two[</pre>]");
    /* A '<' that starts no markup is text; markup left open runs to the end. */
    cuts_html("1 < 2 and 3 > 2", "[]1 < 2 and 3 > 2[]");
    cuts_html("Hi <b class=\"x", "[]Hi[ <b class=\"x]");
    cuts_html("", "[]");
    cuts_html("<p></p>", "[<p></p>]");
}
END_TEST

START_TEST(test_html_join) {
    const char *texts[] = {"<p>Fish &amp; chips. <b>Yes</b></p>", "<img src=a.png>"};
    nmt_serve_segments s;
    ck_assert_int_eq(nmt_serve_segment(texts, 2, 1, 1, NULL, &s), 0);
    ck_assert_int_eq(s.count, 2); /* "Fish & chips." and "Yes"; none in the second text */
    ck_assert_int_eq(s.first[1], 2);
    ck_assert_int_eq(s.first[2], 2);
    nmt_serve_hypothesis h0[] = {{"Fisch & <Chips>.", -1, -1}}, h1[] = {{"Ja", -2, -2}};
    nmt_serve_text parts[2] = {{h0, 1, NULL, 0, 0, 0, NULL, NULL}, {h1, 1, NULL, 0, 0, 0, NULL, NULL}};
    ck_assert_str_eq(s.segments[0], "Fish & chips.");
    ck_assert_str_eq(s.segments[1], "Yes");
    nmt_serve_text out[2];
    ck_assert_int_eq(nmt_serve_join(&s, 2, parts, out), 0);
    ck_assert_str_eq(out[0].hyps[0].text, "<p>Fisch &amp; &lt;Chips&gt;. <b>Ja</b></p>");
    ck_assert_double_eq(out[0].hyps[0].score, -3);
    ck_assert_int_eq(out[1].count, 1);
    ck_assert_str_eq(out[1].hyps[0].text, "<img src=a.png>");
    nmt_serve_text_free(&out[0]);
    nmt_serve_text_free(&out[1]);
    nmt_serve_segments_free(&s);
    /* Nesting beyond the limit is refused. */
    char *deep = malloc(3 * (NMT_SERVE_HTML_MAX_DEPTH + 1) + 2);
    for (int i = 0; i <= NMT_SERVE_HTML_MAX_DEPTH; i++) memcpy(deep + 3 * i, "<b>", 3);
    strcpy(deep + 3 * (NMT_SERVE_HTML_MAX_DEPTH + 1), "x");
    const char *one = deep;
    ck_assert_int_eq(nmt_serve_segment(&one, 1, 1, 1, NULL, &s), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "nested deeper than 512"));
    nmt_serve_segments_free(&s);
    free(deep);
}
END_TEST

/* Joins one HTML text translated segment by segment (hyps[l], its piece pairs and the words of its
 * pieces: "0-0 1-1" and "0 1 1" per segment, or NULL) and checks the result. */
static void joins_html(const char *html, int count, const char *const *hyps, const char *const *pairs,
                       const char *const *source_words, const char *const *target_words, const char *want) {
    nmt_serve_segments s;
    ck_assert_msg(nmt_serve_segment(&html, 1, 1, 1, "en", &s) == 0, "%s", nmt_error());
    ck_assert_int_eq(s.count, count);
    nmt_serve_hypothesis h[4];
    nmt_serve_text parts[4];
    int p[4][32], sw[4][32], tw[4][32];
    for (int l = 0; l < count; l++) {
        h[l] = (nmt_serve_hypothesis){(char *)hyps[l], -1, -1};
        parts[l] = (nmt_serve_text){&h[l], 1, NULL, 0, 0, 0, NULL, NULL};
        if (!pairs) continue;
        char *next;
        for (const char *q = pairs[l]; *q; q = next + strspn(next, " ")) {
            p[l][2 * parts[l].pair_count] = (int)strtol(q, &next, 10);
            p[l][2 * parts[l].pair_count++ + 1] = (int)strtol(next + 1, &next, 10);
        }
        for (const char *q = source_words[l]; *q; q = next + strspn(next, " "))
            sw[l][parts[l].source_pieces++] = (int)strtol(q, &next, 10);
        for (const char *q = target_words[l]; *q; q = next + strspn(next, " ")) tw[l][parts[l].target_pieces++] = (int)strtol(q, &next, 10);
        parts[l].pairs = p[l];
        parts[l].source_word = sw[l];
        parts[l].target_word = tw[l];
    }
    nmt_serve_text out;
    ck_assert_int_eq(nmt_serve_join(&s, 1, parts, &out), 0);
    ck_assert_msg(strcmp(out.hyps[0].text, want) == 0, "'%s': got '%s', want '%s'", html, out.hyps[0].text, want);
    free(out.hyps[0].text);
    free(out.hyps);
    free(out.pairs);
    nmt_serve_segments_free(&s);
}

/* HTML blocks are translated whole and their inline tags put around the aligned words. */
START_TEST(test_html_inline) {
    /* "I drink tea." in pieces ▁I ▁drink ▁te a . -> ▁Ich ▁trinke ▁Tee . */
    const char *one[] = {"Ich trinke Tee."}, *pairs[] = {"0-0 1-1 2-2 4-3"}, *sw[] = {"0 1 2 2 2"}, *tw[] = {"0 1 2 2"};
    joins_html("<p>I drink <b>tea</b>.</p>", 1, one, pairs, sw, tw, "<p>Ich trinke <b>Tee</b>.</p>");
    /* Reordered, over two sentences of one block: words are counted over the block. */
    const char *two[] = {"Das ist gut.", "Ein rotes Auto."}, *pairs2[] = {"0-0 1-1 2-2", "0-0 1-2 2-1"},
               *sw2[] = {"0 1 2", "0 1 2"}, *tw2[] = {"0 1 2", "0 1 2"};
    joins_html("<p>This is <i>good</i>. A <b>car</b> <em>red</em>.</p>", 2, two, pairs2, sw2, tw2,
               "<p>Das ist <i>gut</i>. Ein <em>rotes</em> <b>Auto</b>.</p>");
    /* Nested and unclosed markup, an untranslated element and a void one, attributes kept. */
    const char *three[] = {"Klicken Sie hier"}, *pairs3[] = {"0-0 0-1 1-2"}, *sw3[] = {"0 1"}, *tw3[] = {"0 1 2"};
    joins_html("<li><a href=\"/x?a=1&amp;b=2\">Click <img src=i.png> <span class=k><b>here</li>", 1, three, pairs3, sw3,
               tw3, "<li><a href=\"/x?a=1&amp;b=2\">Klicken Sie<img src=i.png> <span class=k><b>hier</li>");
    /* Without alignment the tags keep their relative places. */
    const char *four[] = {"eins zwei drei"};
    joins_html("<p>one <code>x()</code> <i>two</i> three</p>", 1, four, NULL, NULL, NULL,
               "<p>eins<code>x()</code> <i>zwei</i> drei</p>");
}
END_TEST

typedef struct sweep {
    const char *const *texts;
    int html;
} sweep;

static int segment_attempt(void *context) {
    sweep *w = context;
    nmt_serve_segments s;
    int rc = nmt_serve_segment(w->texts, 2, 1, w->html, NULL, &s);
    nmt_serve_segments_free(&s);
    return rc;
}

START_TEST(test_allocation_failures) {
    const char *texts[] = {"A b. C d", "e"};
    sweep w = {texts, 0};
    ck_assert_int_gt(nmt_test_alloc_sweep(segment_attempt, &w), 2);
    const char *html[] = {"<p>A b. C <b>d</b></p>", "<i>e</i>"};
    sweep h = {html, 1};
    ck_assert_int_gt(nmt_test_alloc_sweep(segment_attempt, &h), 2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("segment");
    TCase *tc = tcase_create("segment");
    tcase_add_test(tc, test_cuts);
    tcase_add_test(tc, test_prefixes);
    tcase_add_test(tc, test_breaks_kept);
    tcase_add_test(tc, test_join);
    tcase_add_test(tc, test_html_cuts);
    tcase_add_test(tc, test_html_join);
    tcase_add_test(tc, test_html_inline);
    tcase_add_test(tc, test_allocation_failures);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
