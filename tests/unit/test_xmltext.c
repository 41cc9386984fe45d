/* Tests of src/serve/xmltext.c: paragraphs found among Word's, PowerPoint's and OpenDocument's markup
 * (runs joined, a word cut by a formatting change kept whole, field codes and skipped elements left
 * out, nested paragraphs apart, references decoded), translations shared out among the runs in order
 * and escaped, xml:space added where Word needs it, the rest written byte for byte; malformed parts
 * refused with their line, and every cut of a part refused or read, never read past. */
#include "serve/xmltext.h"

#include "testing.h"

#include <stdlib.h>
#include <string.h>

static const char *const w_p[] = {"w:p", NULL}, *const w_t[] = {"w:t", NULL}, *const w_space[] = {"w:tab", NULL};
static const nmt_serve_xmltext_dialect docx = {w_p, w_t, w_space, NULL, 1};
static const char *const odf_p[] = {"text:p", "text:h", NULL}, *const odf_space[] = {"text:s", NULL},
                         *const odf_skip[] = {"text:note-citation", NULL};
static const nmt_serve_xmltext_dialect odf = {odf_p, NULL, odf_space, odf_skip, 0};

/* Reads xml, checks its paragraphs ("|"-separated), writes it with translations and compares. */
static void translates(const nmt_serve_xmltext_dialect *d, const char *xml, const char *paragraphs,
                       const char *const *translations, const char *want) {
    nmt_serve_xmltext *x;
    ck_assert_msg(nmt_serve_xmltext_read(xml, strlen(xml), d, "part.xml", &x) == 0, "%s", nmt_error());
    char got[1024] = "";
    for (int i = 0; i < nmt_serve_xmltext_count(x); i++) {
        if (i) strcat(got, "|");
        strcat(got, nmt_serve_xmltext_paragraph(x, i));
    }
    ck_assert_str_eq(got, paragraphs);
    nmt_strbuf b = {0};
    ck_assert_int_eq(nmt_serve_xmltext_write(x, translations, &b), 0);
    ck_assert_str_eq(b.data, want);
    nmt_strbuf_free(&b);
    nmt_serve_xmltext_free(x);
}

START_TEST(word_runs_share_the_translation) {
    const char *const t1[] = {"A B C D E F", "x < y & z"};
    translates(
        &docx,
        "<?xml version=\"1.0\"?>\r\n<w:document><w:body><w:p><w:r><w:rPr><w:b/></w:rPr><w:t>the ca</w:t></w:r>"
        "<w:r><w:t>t sees</w:t></w:r><w:r><w:t xml:space=\"preserve\"> a  dog</w:t></w:r></w:p>"
        "<w:p><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t>R&amp;D</w:t></w:r><w:r><w:tab/>"
        "<w:t>&#228;&#x20AC;</w:t></w:r></w:p><w:p><w:r><w:t>-- !</w:t></w:r></w:p><w:p/></w:body></w:document>",
        "the cat sees a dog|R&D ä€", t1,
        "<?xml version=\"1.0\"?>\r\n<w:document><w:body><w:p><w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">"
        "A B</w:t></w:r><w:r><w:t xml:space=\"preserve\"> C D</w:t></w:r><w:r><w:t xml:space=\"preserve\"> E F</w:t>"
        "</w:r></w:p><w:p><w:r><w:instrText> PAGE </w:instrText></w:r><w:r><w:t xml:space=\"preserve\">x &lt; y</w:t>"
        "</w:r><w:r><w:tab/><w:t xml:space=\"preserve\">&amp; z</w:t></w:r></w:p><w:p><w:r><w:t>-- !</w:t></w:r>"
        "</w:p><w:p/></w:body></w:document>");
    /* A word cut by a formatting change: the run where no word starts is left empty; fewer target words
     * than runs leave the last runs empty. */
    const char *const t2[] = {"Hallo"};
    translates(
        &docx, "<w:p><w:r><w:t>Hel</w:t></w:r><w:r><w:t>lo</w:t></w:r><w:r><w:t> you</w:t></w:r></w:p>", "Hello you",
        t2,
        "<w:p><w:r><w:t xml:space=\"preserve\">Hallo</w:t></w:r><w:r><w:t></w:t></w:r><w:r><w:t></w:t></w:r></w:p>");
}
END_TEST

START_TEST(opendocument_text_and_nested_paragraphs) {
    const char *const t[] = {"X Y", "P Q R S", "N"};
    translates(&odf,
               "<office:text><text:h>big house</text:h><text:p>the <text:span>small</text:span><text:s/>tree"
               "<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>a note</text:p>"
               "</text:note-body></text:note> runs</text:p><![CDATA[<x>]]><!-- c --></office:text>",
               "big house|the small tree runs|a note", t,
               "<office:text><text:h>X Y</text:h><text:p>P<text:span> Q</text:span><text:s/>R"
               "<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>N</text:p>"
               "</text:note-body></text:note> S</text:p><![CDATA[<x>]]><!-- c --></office:text>");
}
END_TEST

static void refused(const char *xml, size_t len, const char *want) {
    nmt_serve_xmltext *x;
    ck_assert_int_eq(nmt_serve_xmltext_read(xml, len, &docx, "a.docx: word/document.xml", &x), -1);
    ck_assert_msg(strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    nmt_serve_xmltext_free(x);
}
#define REFUSED(xml, want) refused(xml, sizeof xml - 1, want)

START_TEST(malformed_parts_are_refused_by_line) {
    REFUSED("<w:p>\n<w:r><w:t>x</w:r></w:p>", "a.docx: word/document.xml: line 2: </w:r> closes <w:t>");
    REFUSED("<w:p>a &nbsp; b</w:p>", "line 1: '&' starts no entity XML knows");
    REFUSED("<w:p a=b>x</w:p>", "an attribute value without quotes");
    REFUSED("<w:p a>x</w:p>", "an attribute without '=' and a value");
    REFUSED("<w:p>x</w:p>\ntext", "line 2: text outside the root element");
    REFUSED("<w:p><w:r>x", "the document ends inside an element");
    REFUSED("<w:p/><w:p/>", "a second root element");
    REFUSED("<w:p><!-- x </w:p>", "markup that never ends");
    REFUSED("<w:p>\0</w:p>", "a NUL byte");
    REFUSED("<w:p>\xC3(</w:p>", "invalid UTF-8 at byte 6");
    REFUSED("", "no element");
    static char deep[8 * 600 + 1];
    for (int i = 0; i < 600; i++) memcpy(deep + 3 * i, "<a>", 3);
    refused(deep, 3 * 600, "elements nested too deep");
}
END_TEST

START_TEST(every_cut_is_read_or_refused) {
    const char xml[] = "<?xml version='1.0'?><!DOCTYPE d [<!ENTITY x 'y'>]><w:document a=\"1\" b='2'><w:p><w:r>"
                       "<w:t>one &amp; two</w:t></w:r><w:r><w:tab/><w:t>three</w:t></w:r></w:p></w:document>";
    const char *const t[] = {"eins zwei drei vier"};
    for (size_t n = 0; n <= sizeof xml - 1; n++) {
        char *copy = malloc(n ? n : 1);
        memcpy(copy, xml, n);
        nmt_serve_xmltext *x;
        const int rc = nmt_serve_xmltext_read(copy, n, &docx, "cut", &x);
        ck_assert_int_eq(rc, n == sizeof xml - 1 ? 0 : -1);
        if (rc == 0) {
            nmt_strbuf b = {0};
            ck_assert_int_eq(nmt_serve_xmltext_count(x), 1);
            ck_assert_str_eq(nmt_serve_xmltext_paragraph(x, 0), "one & two three");
            ck_assert_int_eq(nmt_serve_xmltext_write(x, t, &b), 0);
            ck_assert(strstr(b.data, "<w:t xml:space=\"preserve\">eins zwei drei</w:t></w:r><w:r><w:tab/><w:t "
                                     "xml:space=\"preserve\">vier</w:t>"));
            nmt_strbuf_free(&b);
        }
        nmt_serve_xmltext_free(x);
        free(copy);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("xmltext");
    TCase *tc = tcase_create("xmltext");
    tcase_add_test(tc, word_runs_share_the_translation);
    tcase_add_test(tc, opendocument_text_and_nested_paragraphs);
    tcase_add_test(tc, malformed_parts_are_refused_by_line);
    tcase_add_test(tc, every_cut_is_read_or_refused);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
