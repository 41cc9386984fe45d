/* fuzz_serve_document: the files /translate_file takes (serve/document.h: zip archives through
 * base/zip_mem.h, their XML parts through serve/xmltext.h, an EPUB's spine, SubRip subtitles) read from
 * arbitrary bytes, bounded to 1 MiB inflated.
 *
 * Input: the first byte (mod 8) picks the format (.txt .html .srt .docx .pptx .odt .odp .epub); the rest
 * is the file. Properties besides "never crashes, never leaks": a refusal has a message naming the
 * file; a file read is written back with each text as its own translation, and what is written reads
 * again as the same format with the same number of texts -- and for the office formats the same texts
 * (each paragraph's words go back to the runs they came from) and the same entries, in order.
 */
#include "base/zip_mem.h"
#include "fuzz.h"
#include "serve/document.h"

static const char *const names[] = {"f.txt", "f.html", "f.srt", "f.docx", "f.pptx", "f.odt", "f.odp", "f.epub"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int format = data[0] % 8, office = format >= 3 && format <= 6;
    const char *name = names[format];
    nmt_serve_document *d, *again;
    if (nmt_serve_document_open(name, (const char *)data + 1, size - 1, 1 << 20, &d) < 0) {
        FUZZ_CHECK(strstr(nmt_error(), name) || strstr(nmt_error(), "out of memory") ||
                       strstr(nmt_error(), "Invalid request"),
                   "a refusal that does not name the file: %s", nmt_error());
        nmt_serve_document_free(d);
        return 0;
    }
    char *out;
    size_t len;
    FUZZ_CHECK(nmt_serve_document_write(d, nmt_serve_document_texts(d), &out, &len) == 0, "write: %s", nmt_error());
    FUZZ_CHECK(nmt_serve_document_open(name, out, len, 4 << 20, &again) == 0, "what was written does not read: %s",
               nmt_error());
    FUZZ_CHECK(nmt_serve_document_count(again) == nmt_serve_document_count(d), "%d texts, then %d",
               nmt_serve_document_count(d), nmt_serve_document_count(again));
    for (int i = 0; office && i < nmt_serve_document_count(d); i++)
        FUZZ_CHECK(strcmp(nmt_serve_document_texts(d)[i], nmt_serve_document_texts(again)[i]) == 0,
                   "text %d: '%s', then '%s'", i, nmt_serve_document_texts(d)[i], nmt_serve_document_texts(again)[i]);
    if (format >= 3) {
        nmt_zip_mem a, b;
        FUZZ_CHECK(nmt_zip_mem_read(data + 1, size - 1, 1 << 20, name, &a) == 0 &&
                       nmt_zip_mem_read(out, len, 4 << 20, name, &b) == 0,
                   "the archives do not read");
        FUZZ_CHECK(a.count == b.count, "%d entries, then %d", a.count, b.count);
        for (int i = 0; i < a.count; i++)
            FUZZ_CHECK(strcmp(a.entries[i].name, b.entries[i].name) == 0 && a.entries[i].method == b.entries[i].method,
                       "entry %d: %s, then %s", i, a.entries[i].name, b.entries[i].name);
        nmt_zip_mem_free(&a);
        nmt_zip_mem_free(&b);
    }
    free(out);
    nmt_serve_document_free(again);
    nmt_serve_document_free(d);
    return 0;
}
