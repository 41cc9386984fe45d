/* document: the files /translate_file takes, read into texts and written back translated (document.h). */
#include "serve/document.h"

#include "base/strbuf.h"
#include "base/utf8.h"
#include "base/util.h"
#include "base/zip_mem.h"
#include "serve/epub.h"
#include "serve/srt.h"
#include "serve/xmltext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum kind { TXT, ODT, ODP, DOCX, PPTX, EPUB, HTML, SRT, HTM } kind;

static const struct {
    const char *extension, *type;
} formats[] = {
    {".txt", "text/plain; charset=utf-8"},
    {".odt", "application/vnd.oasis.opendocument.text"},
    {".odp", "application/vnd.oasis.opendocument.presentation"},
    {".docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {".pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    {".epub", "application/epub+zip"},
    {".html", "text/html; charset=utf-8"},
    {".srt", "application/x-subrip"},
    {".htm", "text/html; charset=utf-8"},
};

const char nmt_serve_document_formats_json[] =
    "\".txt\",\".odt\",\".odp\",\".docx\",\".pptx\",\".epub\",\".html\",\".srt\"";

static const char *const docx_paragraphs[] = {"w:p", NULL}, *const docx_text[] = {"w:t", NULL},
                         *const docx_spaces[] = {"w:tab", "w:br", "w:cr", NULL},
                         *const docx_skipped[] = {"w:fldSimple", NULL};
static const char *const pptx_paragraphs[] = {"a:p", NULL}, *const pptx_text[] = {"a:t", NULL},
                         *const pptx_spaces[] = {"a:br", NULL}, *const pptx_skipped[] = {"a:fld", NULL};
static const char *const odf_paragraphs[] = {"text:p", "text:h", NULL},
                         *const odf_spaces[] = {"text:s", "text:tab", "text:line-break", NULL},
                         *const odf_skipped[] = {"text:note-citation", "text:tracked-changes", "text:page-number",
                                                 "text:page-count", "text:date", "text:time", "text:file-name",
                                                 "text:sequence", "text:reference-ref", "text:bookmark-ref",
                                                 "dc:creator", "dc:date", "meta:date-string", "svg:title", "svg:desc",
                                                 NULL};
static const nmt_serve_xmltext_dialect dialects[] = {
    [ODT] = {odf_paragraphs, NULL, odf_spaces, odf_skipped, 0},
    [ODP] = {odf_paragraphs, NULL, odf_spaces, odf_skipped, 0},
    [DOCX] = {docx_paragraphs, docx_text, docx_spaces, docx_skipped, 1},
    [PPTX] = {pptx_paragraphs, pptx_text, pptx_spaces, pptx_skipped, 0},
};

typedef struct part {
    int entry;            /* its entry in the archive */
    char *what;           /* "file: entry" */
    nmt_serve_xmltext *x; /* its paragraphs (NULL: an EPUB chapter, one HTML text) */
    int first;            /* its first text */
} part;

struct nmt_serve_document {
    kind kind;
    char *text; /* TXT, HTML: the file */
    nmt_serve_srt srt;
    nmt_zip_mem zip;
    part *parts;
    int part_count;
    const char **texts; /* [count] */
    int count;
};

static int find_kind(const char *name) {
    const char *dot = strrchr(name, '.');
    for (int k = 0; dot && k < (int)(sizeof formats / sizeof formats[0]); k++)
        if (strcasecmp(dot, formats[k].extension) == 0) return k;
    return -1;
}

const char *nmt_serve_document_type(const char *name) {
    const int k = find_kind(name);
    return formats[k < 0 ? TXT : k].type;
}

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }
static int ends(const char *s, const char *suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Whether entry `name` of an archive of kind k is translated (EPUB's chapters are chosen by its OPF). */
static int translated_part(kind k, const char *name) {
    switch (k) {
    case DOCX:
        return strcmp(name, "word/document.xml") == 0 ||
               ((starts(name, "word/header") || starts(name, "word/footer")) && ends(name, ".xml") &&
                !strchr(name + 5, '/'));
    case PPTX: {
        if (!starts(name, "ppt/slides/slide") || !ends(name, ".xml")) return 0;
        const char *digits = name + strlen("ppt/slides/slide");
        const size_t n = strspn(digits, "0123456789");
        return n > 0 && strcmp(digits + n, ".xml") == 0;
    }
    case ODT:
    case ODP: return strcmp(name, "content.xml") == 0;
    default: return 0;
    }
}

static int add_part(nmt_serve_document *d, const char *file, int entry, int *cap) {
    if (d->part_count == *cap) {
        const int cap2 = *cap ? *cap * 2 : 8;
        part *p = nmt_realloc(d->parts, (size_t)cap2 * sizeof *p);
        if (!p) return -1;
        d->parts = p;
        *cap = cap2;
    }
    part *p = &d->parts[d->part_count++];
    memset(p, 0, sizeof *p);
    p->entry = entry;
    const nmt_zip_entry *e = &d->zip.entries[entry];
    const size_t n = strlen(file) + strlen(e->name) + 3;
    if (!(p->what = nmt_malloc(n))) return -1;
    snprintf(p->what, n, "%s: %s", file, e->name);
    if (d->kind != EPUB)
        return nmt_serve_xmltext_read((const char *)e->data, e->size, &dialects[d->kind], p->what, &p->x);
    if (memchr(e->data, '\0', e->size)) return nmt_error_set("%s: a NUL byte", p->what);
    const long bad = nmt_utf8_invalid_at((const char *)e->data, e->size);
    if (bad >= 0) return nmt_error_set("%s: invalid UTF-8 at byte %ld", p->what, bad + 1);
    return 0;
}

/* The archive's parts read, and their paragraphs made the texts. */
static int open_archive(nmt_serve_document *d, const char *name, const char *data, size_t len, size_t max_bytes) {
    if (nmt_zip_mem_read(data, len, max_bytes, name, &d->zip) < 0) return -1;
    int cap = 0;
    if (d->kind == EPUB) {
        int *chapters = nmt_malloc(((size_t)d->zip.count + 1) * sizeof *chapters), n = 0;
        if (!chapters) return -1;
        int rc = nmt_serve_epub_chapters(&d->zip, name, chapters, &n);
        for (int i = 0; i < n && rc == 0; i++) rc = add_part(d, name, chapters[i], &cap);
        free(chapters);
        if (rc < 0) return -1;
    } else {
        for (int i = 0; i < d->zip.count; i++)
            if (translated_part(d->kind, d->zip.entries[i].name) && add_part(d, name, i, &cap) < 0) return -1;
    }
    if (d->kind != EPUB && d->part_count == 0)
        return nmt_error_set("%s: no %s in the archive", name,
                             d->kind == DOCX   ? "word/document.xml"
                             : d->kind == PPTX ? "slide (ppt/slides/slideN.xml)"
                                               : "content.xml");
    int total = 0;
    for (int i = 0; i < d->part_count; i++) total += d->parts[i].x ? nmt_serve_xmltext_count(d->parts[i].x) : 1;
    if (!(d->texts = nmt_calloc(total ? (size_t)total : 1, sizeof *d->texts))) return -1;
    for (int i = 0; i < d->part_count; i++) {
        part *p = &d->parts[i];
        p->first = d->count;
        if (!p->x) d->texts[d->count++] = (const char *)d->zip.entries[p->entry].data; /* the chapter, one text */
        for (int k = 0; p->x && k < nmt_serve_xmltext_count(p->x); k++)
            d->texts[d->count++] = nmt_serve_xmltext_paragraph(p->x, k);
    }
    return 0;
}

int nmt_serve_document_open(const char *name, const char *data, size_t len, size_t max_bytes,
                            nmt_serve_document **out) {
    nmt_serve_document *d = *out = nmt_calloc(1, sizeof *d);
    if (!d) return -1;
    const int k = find_kind(name);
    if (!name[0]) return nmt_error_set("Invalid request: empty file");
    if (k < 0) return nmt_error_set("Invalid request: file format not supported");
    d->kind = k == HTM ? HTML : (kind)k;
    if (d->kind == TXT || d->kind == HTML) {
        if (memchr(data, '\0', len)) return nmt_error_set("%s: a NUL byte", name);
        const long bad = nmt_utf8_invalid_at(data, len);
        if (bad >= 0) return nmt_error_set("%s: invalid UTF-8 at byte %ld", name, bad + 1);
        if (!(d->text = nmt_malloc(len + 1)) || !(d->texts = nmt_calloc(1, sizeof *d->texts))) return -1;
        memcpy(d->text, data, len);
        d->text[len] = '\0';
        d->texts[d->count++] = d->text;
        return 0;
    }
    if (d->kind == SRT) {
        if (nmt_serve_srt_read(data, len, name, &d->srt) < 0) return -1;
        if (!(d->texts = nmt_calloc(d->srt.count ? (size_t)d->srt.count : 1, sizeof *d->texts))) return -1;
        for (int i = 0; i < d->srt.count; i++) d->texts[d->count++] = d->srt.cues[i].text;
        return 0;
    }
    return open_archive(d, name, data, len, max_bytes);
}

int nmt_serve_document_count(const nmt_serve_document *d) { return d->count; }
const char *const *nmt_serve_document_texts(const nmt_serve_document *d) { return d->texts; }
int nmt_serve_document_html(const nmt_serve_document *d) { return d->kind == HTML || d->kind == EPUB; }

/* The archive with its parts translated. */
static int write_archive(const nmt_serve_document *d, const char *const *translations, char **out, size_t *len) {
    nmt_zip_mem copy = {nmt_malloc(((size_t)d->zip.count + 1) * sizeof *copy.entries), d->zip.count};
    int rc = -1, written = 0;
    if (!copy.entries) return -1;
    memcpy(copy.entries, d->zip.entries, (size_t)d->zip.count * sizeof *copy.entries);
    for (; written < d->part_count; written++) {
        const part *p = &d->parts[written];
        nmt_strbuf b = {0};
        if (p->x ? nmt_serve_xmltext_write(p->x, translations + p->first, &b) < 0
                 : nmt_strbuf_puts(&b, translations[p->first]) < 0) {
            nmt_strbuf_free(&b);
            goto done;
        }
        copy.entries[p->entry].data = (unsigned char *)b.data;
        copy.entries[p->entry].size = b.len;
    }
    rc = nmt_zip_mem_write(&copy, (unsigned char **)out, len);
done:
    for (int i = 0; i < written; i++) free(copy.entries[d->parts[i].entry].data);
    free(copy.entries);
    return rc;
}

int nmt_serve_document_write(const nmt_serve_document *d, const char *const *translations, char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    if (d->kind == TXT || d->kind == HTML) {
        if (!(*out = nmt_strdup(translations[0]))) return -1;
        *len = strlen(*out);
        return 0;
    }
    if (d->kind == SRT) {
        nmt_strbuf b = {0};
        if (nmt_serve_srt_write(&d->srt, translations, &b) < 0) return nmt_strbuf_free(&b), -1;
        *out = b.data ? b.data : nmt_strdup("");
        *len = b.len;
        return *out ? 0 : -1;
    }
    return write_archive(d, translations, out, len);
}

int nmt_serve_document_take(nmt_serve_request *r, nmt_serve_document **out) {
    if (nmt_serve_document_open(r->filename, r->q[0], r->file_len, NMT_SERVE_DOCUMENT_MAX_BYTES, out) < 0) return -1;
    const nmt_serve_document *d = *out;
    char **q = nmt_calloc(d->count ? (size_t)d->count : 1, sizeof *q);
    if (!q) return -1;
    for (int i = 0; i < d->count; i++)
        if (!(q[i] = nmt_strdup(d->texts[i]))) {
            while (i--) free(q[i]);
            free(q);
            return -1;
        }
    for (int i = 0; i < r->count; i++) free(r->q[i]);
    free(r->q);
    r->q = q;
    r->count = d->count;
    return 0;
}

int nmt_serve_document_write_texts(const nmt_serve_document *d, const nmt_serve_text *texts, char **out, size_t *len) {
    const char **translations = nmt_calloc(d->count ? (size_t)d->count : 1, sizeof *translations);
    if (!translations) return -1;
    for (int i = 0; i < d->count; i++) translations[i] = texts[i].hyps[0].text;
    const int rc = nmt_serve_document_write(d, translations, out, len);
    free(translations);
    return rc;
}

void nmt_serve_document_free(nmt_serve_document *d) {
    if (!d) return;
    for (int i = 0; i < d->part_count; i++) {
        nmt_serve_xmltext_free(d->parts[i].x);
        free(d->parts[i].what);
    }
    free(d->parts);
    nmt_zip_mem_free(&d->zip);
    nmt_serve_srt_free(&d->srt);
    free(d->text);
    free(d->texts);
    free(d);
}
