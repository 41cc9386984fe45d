/* document: the files that POST /translate_file takes, as LibreTranslate takes them (its
 * argos-translate-files; .pdf is not taken): read into the texts to translate, and written back with
 * their translations.
 *
 * The format is the name's extension (any case), in LibreTranslate's order: .txt (the file is one
 * text), .odt, .odp, .docx, .pptx, .epub, .html (one HTML text; .htm too), .srt (serve/srt.h: one text
 * a cue). The office formats are zip archives (base/zip_mem.h) whose XML parts are translated by
 * serve/xmltext.h: .docx word/document.xml, word/header*.xml and word/footer*.xml (paragraphs w:p, text
 * w:t; field codes, in w:instrText, and simple fields' values, in w:fldSimple, left alone); .pptx
 * ppt/slides/slideN.xml (a:p, a:t; fields' values, a:fld, left alone); .odt and .odp content.xml (text:p
 * and text:h, their character data; footnote citations, tracked changes, fields (page, date, file name,
 * sequence and reference numbers), a comment's author and date and an image's title and description
 * left alone, while a comment's or a caption's own paragraphs are translated). .epub: each XHTML chapter of its spine (serve/epub.h) is one HTML text, translated
 * as format html translates one (serve/segment.h: blocks, inline tags placed by the alignment), as
 * LibreTranslate translates them through translatehtml; it must be UTF-8 without a NUL byte. Every other
 * entry is copied unchanged, in its place, stored or deflated as it was (an ODF's mimetype stays first
 * and stored). Text files must be UTF-8 without a NUL byte.
 *
 * What is not a valid file of its format is refused with the file's name, the entry and, for XML, the
 * line: "a.docx: word/document.xml: line 2: </w:r> closes <w:t>". An archive inflates to at most
 * max_bytes in all.
 */
#ifndef NMT_SERVE_DOCUMENT_H
#define NMT_SERVE_DOCUMENT_H

#include <stddef.h>

#include "serve/request.h"

typedef struct nmt_serve_document nmt_serve_document;

enum { NMT_SERVE_DOCUMENT_MAX_BYTES = 64 << 20 }; /* what an uploaded archive may inflate to */

/* The extensions taken, as /frontend/settings lists them: "\".txt\",\".odt\",...". */
extern const char nmt_serve_document_formats_json[];

/* The Content-Type of the format named by `name` (its download); text/plain for an unknown one. */
const char *nmt_serve_document_type(const char *name);
/* Reads the file `name` (data[0, len)); refuses a format not taken ("Invalid request: file format not
 * supported") and a damaged file. Release *out with nmt_serve_document_free (also after a failure). */
int nmt_serve_document_open(const char *name, const char *data, size_t len, size_t max_bytes, nmt_serve_document **out);
/* The file of a /translate_file request (r->q[0], r->file_len bytes, named r->filename) read, and r's
 * texts made the document's texts to translate (r->q, r->count). */
int nmt_serve_document_take(nmt_serve_request *r, nmt_serve_document **out);
/* Its texts to translate ([count]), and whether they are HTML (serve/segment.h's html). */
int nmt_serve_document_count(const nmt_serve_document *d);
const char *const *nmt_serve_document_texts(const nmt_serve_document *d);
int nmt_serve_document_html(const nmt_serve_document *d);
/* The file with text i replaced by translations[i]: *out (free it), *len bytes. */
int nmt_serve_document_write(const nmt_serve_document *d, const char *const *translations, char **out, size_t *len);
/* The same from translated texts (their best hypotheses), texts[0, count). */
int nmt_serve_document_write_texts(const nmt_serve_document *d, const nmt_serve_text *texts, char **out, size_t *len);
void nmt_serve_document_free(nmt_serve_document *d);

#endif
