/* fuzz_zip: arbitrary bytes read as a zip archive by the codec (base/zip.h), bounded to 1 MiB inflated,
 * from memory and from a file.
 *
 * Properties besides "never crashes, never leaks":
 *   - both sources read alike: the same entries (name, method, time, date, size) and data, or the same
 *     refusal, which names the archive (or says "out of memory");
 *   - an accepted archive's entries written again by the codec (each stored or deflated as it came)
 *     read back as the same entries and data;
 *   - with the 1st, 2nd, ... allocation failing, reading reports "out of memory".
 *
 * Seeds (tests/fuzz/corpus/zip): fuzz_npz's stored and deflated .npz seeds, fuzz_serve_document's .docx
 * and .epub (without the byte that picks their format), an archive Python's zipfile streamed (data
 * descriptors, a folder, a comment after the end record) and one without entries.
 */
#include "base/strbuf.h"
#include "base/zip.h"
#include "fuzz.h"

typedef struct archive {
    nmt_strbuf listing, data; /* a line per entry; every entry's data, one after the other */
    nmt_zip_record *records;  /* [count], names owned */
    size_t *at;               /* [count]: where each entry's data begins in data */
    int count;
} archive;

static void archive_free(archive *a) {
    for (int i = 0; i < a->count; i++) free((char *)a->records[i].name);
    free(a->records);
    free(a->at);
    nmt_strbuf_free(&a->listing);
    nmt_strbuf_free(&a->data);
    memset(a, 0, sizeof *a);
}

/* Reads the archive src whole into *a (free it with archive_free, also after a failure). */
static int read_archive(nmt_zip_source src, archive *a) {
    nmt_zip_reader r;
    nmt_zip_record e;
    nmt_zip_sink out = {.what = "data", .buf = &a->data};
    memset(a, 0, sizeof *a);
    int rc = nmt_zip_open(&r, src, 1 << 20);
    if (rc == 0 && (!(a->records = nmt_calloc(r.count + 1, sizeof *a->records)) ||
                    !(a->at = nmt_calloc(r.count + 1, sizeof *a->at))))
        rc = -1;
    while (rc == 0 && (rc = nmt_zip_next(&r, &e)) > 0) {
        nmt_strbuf_printf(&a->listing, "%s|%u|%u|%u|%u\n", e.name, e.method, e.dos_time, e.dos_date, e.size);
        a->at[a->count] = a->data.len;
        a->records[a->count] = e;
        rc = (a->records[a->count++].name = nmt_strdup(e.name)) ? nmt_zip_read(&r, &e, &out) : -1;
    }
    nmt_zip_close(&r);
    return rc == 0 && a->listing.failed ? -1 : rc;
}

static int read_from_memory(void *context) {
    const nmt_zip_source *src = context;
    archive a;
    const int rc = read_archive(*src, &a);
    archive_free(&a);
    return rc;
}

static void expect_same(const archive *a, const archive *b, const char *what) {
    FUZZ_CHECK(a->listing.len == b->listing.len &&
                   (!a->listing.len || memcmp(a->listing.data, b->listing.data, a->listing.len) == 0),
               "%s: the entries differ:\n%s\nthen\n%s", what, a->listing.data, b->listing.data);
    FUZZ_CHECK(a->data.len == b->data.len && (!a->data.len || memcmp(a->data.data, b->data.data, a->data.len) == 0),
               "%s: the data differ", what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nmt_zip_source from_memory = {.what = "input", .mem = data, .size = size};
    nmt_zip_source from_file = {.what = "input", .size = size};
    FUZZ_CHECK((from_file.fp = fopen(fuzz_file(0, "input.zip", data, size), "rb")) != NULL, "cannot open the input");
    archive a, b;
    const int rc = read_archive(from_memory, &a);
    char *refusal = rc < 0 ? strdup(nmt_error()) : NULL;
    FUZZ_CHECK(read_archive(from_file, &b) == rc, "from memory %d, from the file not (%s)", rc, nmt_error());
    fclose(from_file.fp);
    if (rc < 0) {
        FUZZ_CHECK(refusal && strcmp(refusal, nmt_error()) == 0, "memory: '%s', file: '%s'", refusal, nmt_error());
        FUZZ_CHECK(strncmp(refusal, "input: ", 7) == 0 || strstr(refusal, "out of memory"), "the refusal names no "
                   "archive: '%s'", refusal);
        free(refusal);
        archive_free(&a);
        archive_free(&b);
        return 0;
    }
    expect_same(&a, &b, "memory, then file");
    archive_free(&b);
    /* Written again, it reads as the same entries. */
    nmt_strbuf again = {0};
    nmt_zip_sink sink = {.what = "again", .buf = &again};
    for (int i = 0; i < a.count; i++) {
        const unsigned char *bytes = a.data.data ? (const unsigned char *)a.data.data + a.at[i] : NULL;
        FUZZ_CHECK(nmt_zip_put_entry(&sink, &a.records[i], bytes, a.records[i].size) == 0, "cannot write entry %d: %s",
                   i, nmt_error());
    }
    const uint64_t central = sink.at;
    for (int i = 0; i < a.count; i++) FUZZ_CHECK(nmt_zip_put_central(&sink, &a.records[i]) == 0, "%s", nmt_error());
    FUZZ_CHECK(nmt_zip_put_end(&sink, (unsigned)a.count, central) == 0, "%s", nmt_error());
    const nmt_zip_source written = {.what = "again", .mem = (const unsigned char *)again.data, .size = again.len};
    FUZZ_CHECK(read_archive(written, &b) == 0, "what was written does not read: %s", nmt_error());
    expect_same(&a, &b, "read, then written and read");
    archive_free(&b);
    archive_free(&a);
    nmt_strbuf_free(&again);
    fuzz_alloc_sweep(read_from_memory, &from_memory, 200);
    return 0;
}
