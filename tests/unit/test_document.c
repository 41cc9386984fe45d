/* Tests of src/serve/document.c and src/serve/epub.c: which files /translate_file takes and their
 * Content-Types; which parts of a .docx, .pptx, .odt and .epub are translated (an EPUB's chapters in
 * its spine's order, each one HTML text) and that the rest comes back unchanged, in order, with its method; text, HTML and
 * subtitles; damaged and unsupported files refused by name. */
#include "base/zip_mem.h"
#include "serve/document.h"

#include "testing.h"

#include <stdlib.h>
#include <string.h>

typedef struct part_spec {
    const char *name, *data;
    int method;
} part_spec;

/* An archive of the parts, written by zip_mem. */
static char *archive(const part_spec *parts, int n, size_t *len) {
    nmt_zip_entry entries[16];
    for (int i = 0; i < n; i++)
        entries[i] = (nmt_zip_entry){
            (char *)parts[i].name, (unsigned char *)parts[i].data, strlen(parts[i].data), parts[i].method, 0, 0x21};
    const nmt_zip_mem z = {entries, n};
    unsigned char *out;
    ck_assert_int_eq(nmt_zip_mem_write(&z, &out, len), 0);
    return (char *)out;
}

/* Opens the file, checks its texts ("|"-separated), translates text i as "T<i>" and returns the
 * result's entries (an archive) in *out. */
static void translate(const char *name, const char *data, size_t len, const char *texts, nmt_zip_mem *out) {
    nmt_serve_document *d;
    ck_assert_msg(nmt_serve_document_open(name, data, len, 1 << 20, &d) == 0, "%s", nmt_error());
    char got[2048] = "", labels[16][16];
    const char *translations[16];
    ck_assert_int_le(nmt_serve_document_count(d), 16);
    for (int i = 0; i < nmt_serve_document_count(d); i++) {
        if (i) strcat(got, "|");
        strcat(got, nmt_serve_document_texts(d)[i]);
        snprintf(labels[i], sizeof labels[i], "T%d", i);
        translations[i] = labels[i];
    }
    ck_assert_str_eq(got, texts);
    char *bytes;
    size_t n;
    ck_assert_int_eq(nmt_serve_document_write(d, translations, &bytes, &n), 0);
    ck_assert_msg(nmt_zip_mem_read(bytes, n, 1 << 20, name, out) == 0, "%s", nmt_error());
    free(bytes);
    nmt_serve_document_free(d);
}

static void expect_entry(const nmt_zip_mem *z, int i, const char *name, const char *data, int method) {
    ck_assert_int_lt(i, z->count);
    ck_assert_str_eq(z->entries[i].name, name);
    ck_assert_int_eq(z->entries[i].method, method);
    ck_assert_uint_eq(z->entries[i].size, strlen(data));
    ck_assert_msg(memcmp(z->entries[i].data, data, z->entries[i].size) == 0, "%s: %.*s", name, (int)z->entries[i].size,
                  (const char *)z->entries[i].data);
}

#define P(text) "<w:p><w:r><w:t>" text "</w:t></w:r></w:p>"
#define TP(text) "<w:p><w:r><w:t xml:space=\"preserve\">" text "</w:t></w:r></w:p>"

START_TEST(office_parts_are_translated_the_rest_kept) {
    const part_spec docx[] = {{"[Content_Types].xml", "<Types/>", 8},
                              {"word/document.xml",
                               "<w:d>" P("one") "<w:p><w:fldSimple><w:r><w:t>3</w:t></w:r></w:fldSimple></w:p></w:d>",
                               8},
                              {"word/header1.xml", "<w:h>" P("two") "</w:h>", 0},
                              {"word/footer2.xml", "<w:f>" P("three") "</w:f>", 8},
                              {"word/styles.xml", "<w:s>" P("kept") "</w:s>", 8},
                              {"word/media/a.png", "\x89PNG", 0}};
    size_t len;
    char *data = archive(docx, 6, &len);
    nmt_zip_mem z;
    translate("Report.DOCX", data, len, "one|two|three", &z);
    expect_entry(&z, 0, "[Content_Types].xml", "<Types/>", 8);
    expect_entry(&z, 1, "word/document.xml",
                 "<w:d>" TP("T0") "<w:p><w:fldSimple><w:r><w:t>3</w:t></w:r></w:fldSimple></w:p></w:d>", 8);
    expect_entry(&z, 2, "word/header1.xml", "<w:h>" TP("T1") "</w:h>", 0);
    expect_entry(&z, 3, "word/footer2.xml", "<w:f>" TP("T2") "</w:f>", 8);
    expect_entry(&z, 4, "word/styles.xml", "<w:s>" P("kept") "</w:s>", 8);
    expect_entry(&z, 5, "word/media/a.png", "\x89PNG", 0);
    nmt_zip_mem_free(&z);
    free(data);

    const part_spec pptx[] = {{"ppt/slides/slide10.xml",
                               "<p:sld><a:p><a:r><a:t>ten</a:t></a:r><a:fld><a:t>10</a:t></a:fld></a:p></p:sld>", 8},
                              {"ppt/slideLayouts/slideLayout1.xml", "<a:p><a:r><a:t>layout</a:t></a:r></a:p>", 8},
                              {"ppt/slides/slide2.xml", "<p:sld><a:p><a:r><a:t>two</a:t></a:r></a:p></p:sld>", 8}};
    data = archive(pptx, 3, &len);
    translate("deck.pptx", data, len, "ten|two", &z);
    expect_entry(&z, 0, "ppt/slides/slide10.xml",
                 "<p:sld><a:p><a:r><a:t>T0</a:t></a:r><a:fld><a:t>10</a:t></a:fld></a:p></p:sld>", 8);
    expect_entry(&z, 1, "ppt/slideLayouts/slideLayout1.xml", "<a:p><a:r><a:t>layout</a:t></a:r></a:p>", 8);
    nmt_zip_mem_free(&z);
    free(data);

    const part_spec odt[] = {{"mimetype", "application/vnd.oasis.opendocument.text", 0},
                             {"content.xml", "<o:d><text:p>one <text:span>two</text:span><office:annotation>"
                                             "<dc:creator>Ann</dc:creator><dc:date>2026</dc:date><text:p>note</text:p>"
                                             "</office:annotation><draw:frame><svg:title>alt</svg:title></draw:frame>"
                                             "</text:p></o:d>",
                              8}};
    data = archive(odt, 2, &len);
    translate("a.odt", data, len, "one two|note", &z);
    expect_entry(&z, 0, "mimetype", "application/vnd.oasis.opendocument.text", 0);
    expect_entry(&z, 1, "content.xml",
                 "<o:d><text:p>T0<text:span></text:span><office:annotation><dc:creator>Ann</dc:creator><dc:date>2026"
                 "</dc:date><text:p>T1</text:p></office:annotation><draw:frame><svg:title>alt</svg:title></draw:frame>"
                 "</text:p></o:d>",
                 8);
    nmt_zip_mem_free(&z);
    free(data);
}
END_TEST

START_TEST(epub_chapters_follow_the_spine) {
    const part_spec epub[] = {
        {"mimetype", "application/epub+zip", 0},
        {"META-INF/container.xml", "<container><rootfiles><rootfile full-path='OPS/book.opf'/></rootfiles></container>",
         8},
        {"OPS/book.opf",
         "<opf:package><opf:manifest><opf:item id='a' href='a.xhtml' media-type='application/xhtml+xml'/>"
         "<opf:item href=\"text/b.html\" id=\"b\"/><opf:item id='css' href='s.css' media-type='text/css'/>"
         "</opf:manifest><opf:spine><opf:itemref idref='b'/><opf:itemref idref='a'/><opf:itemref "
         "idref='css'/><opf:itemref idref='a'/></opf:spine></opf:package>",
         8},
        {"OPS/a.xhtml", "<html><body><p>first</p></body></html>", 8},
        {"OPS/text/b.html",
         "<html><head><title>second</title><script>x</script></head><body><h1>third</h1></body></html>", 8},
        {"OPS/unlisted.xhtml", "<html><p>kept</p></html>", 8},
        {"OPS/s.css", "p {}", 8}};
    size_t len;
    char *data = archive(epub, 7, &len);
    nmt_zip_mem z;
    translate("book.epub", data, len,
              "<html><head><title>second</title><script>x</script></head><body><h1>third</h1></body></html>|"
              "<html><body><p>first</p></body></html>",
              &z);
    expect_entry(&z, 3, "OPS/a.xhtml", "T1", 8);
    expect_entry(&z, 4, "OPS/text/b.html", "T0", 8);
    expect_entry(&z, 5, "OPS/unlisted.xhtml", "<html><p>kept</p></html>", 8);
    nmt_zip_mem_free(&z);
    free(data);
}
END_TEST

static void refused(const char *name, const char *data, size_t len, const char *want) {
    nmt_serve_document *d;
    ck_assert_int_eq(nmt_serve_document_open(name, data, len, 1 << 20, &d), -1);
    ck_assert_msg(strstr(nmt_error(), want), "'%s' lacks '%s'", nmt_error(), want);
    nmt_serve_document_free(d);
}

START_TEST(formats_types_and_refusals) {
    ck_assert_str_eq(nmt_serve_document_formats_json,
                     "\".txt\",\".odt\",\".odp\",\".docx\",\".pptx\",\".epub\",\".html\",\".srt\"");
    ck_assert_str_eq(nmt_serve_document_type("x.docx"),
                     "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    ck_assert_str_eq(nmt_serve_document_type("x.ODP"), "application/vnd.oasis.opendocument.presentation");
    ck_assert_str_eq(nmt_serve_document_type("x.srt"), "application/x-subrip");
    ck_assert_str_eq(nmt_serve_document_type("x.htm"), "text/html; charset=utf-8");
    ck_assert_str_eq(nmt_serve_document_type("x"), "text/plain; charset=utf-8");
    refused("a.pdf", "%PDF", 4, "Invalid request: file format not supported");
    refused("", "x", 1, "Invalid request: empty file");
    refused("a.docx", "not an archive, but long enough for one", 39, "a.docx: not a zip archive");
    refused("a.txt", "a\0b", 3, "a.txt: a NUL byte");
    size_t len;
    const part_spec none[] = {{"styles.xml", "<x/>", 8}};
    char *data = archive(none, 1, &len);
    refused("a.odt", data, len, "a.odt: no content.xml in the archive");
    refused("a.docx", data, len, "a.docx: no word/document.xml in the archive");
    refused("a.epub", data, len, "a.epub: no META-INF/container.xml (not an EPUB)");
    free(data);
    const part_spec bad[] = {{"content.xml", "<o>\n<text:p>x</o>", 8}};
    data = archive(bad, 1, &len);
    refused("a.odp", data, len, "a.odp: content.xml: line 2: </o> closes <text:p>");
    free(data);
    /* Text, HTML and subtitles come back whole. */
    nmt_serve_document *d;
    ck_assert_int_eq(nmt_serve_document_open("a.htm", "<p>hi</p>", 9, 1 << 20, &d), 0);
    ck_assert_int_eq(nmt_serve_document_html(d), 1);
    ck_assert_int_eq(nmt_serve_document_count(d), 1);
    ck_assert_str_eq(nmt_serve_document_texts(d)[0], "<p>hi</p>");
    char *out;
    const char *const hallo[] = {"<p>hallo</p>"};
    ck_assert_int_eq(nmt_serve_document_write(d, hallo, &out, &len), 0);
    ck_assert_str_eq(out, "<p>hallo</p>");
    free(out);
    nmt_serve_document_free(d);
    ck_assert_int_eq(nmt_serve_document_open("a.srt", "1\n0 --> 1\nhi\n", 13, 1 << 20, &d), 0);
    ck_assert_int_eq(nmt_serve_document_html(d), 0);
    ck_assert_str_eq(nmt_serve_document_texts(d)[0], "hi");
    const char *const hallo_text[] = {"hallo"};
    ck_assert_int_eq(nmt_serve_document_write(d, hallo_text, &out, &len), 0);
    ck_assert_str_eq(out, "1\n0 --> 1\nhallo\n\n");
    free(out);
    nmt_serve_document_free(d);
}
END_TEST

int main(void) {
    Suite *s = suite_create("document");
    TCase *tc = tcase_create("document");
    tcase_add_test(tc, office_parts_are_translated_the_rest_kept);
    tcase_add_test(tc, epub_chapters_follow_the_spine);
    tcase_add_test(tc, formats_types_and_refusals);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
