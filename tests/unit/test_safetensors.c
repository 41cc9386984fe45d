/* Tests of safetensors: the exact bytes of a small file (worked out by hand from the format's
 * definition), round trips, files laid out as other writers lay them out, every kind of damage
 * (each refused with the file's name and the problem), and a deterministic mutation sweep that must
 * never crash (run it under ASan). */
#include "base/io.h"
#include "model/safetensors.h"
#include "base/hash.h"
#include "base/util.h"
#include "testing.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A file in memory: the 8-byte little-endian length of `header`, the header, then `data`. */
static void *make_blob(const char *header, const void *data, size_t data_size, size_t *size) {
    size_t n = strlen(header);
    unsigned char *blob = malloc(8 + n + data_size);
    for (int i = 0; i < 8; i++) blob[i] = (unsigned char)((uint64_t)n >> (8 * i));
    memcpy(blob + 8, header, n);
    if (data_size) memcpy(blob + 8 + n, data, data_size);
    *size = 8 + n + data_size;
    return blob;
}

/* Parses header + data, expecting failure with a message that names "mem.st" and contains `want`. */
static void expect_bad(const char *header, const void *data, size_t data_size, const char *want) {
    size_t size;
    void *blob = make_blob(header, data, data_size, &size);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_parse(&f, blob, size, "mem.st"), -1);
    ck_assert_msg(strncmp(nmt_error(), "mem.st: ", 8) == 0 && strstr(nmt_error(), want), "error '%s' lacks '%s'",
                  nmt_error(), want);
    ck_assert_ptr_null(f.blob);
    ck_assert_int_eq(f.num_tensors, 0);
}

static char *temp_path(const char *name) { return nmt_path_join(nmt_test_tmpdir, name); }

START_TEST(writes_the_exact_bytes_of_the_format) {
    /* One F32 tensor "a" of shape [2] holding 1.0 and -2.0, and metadata k="v", then the writer's
     * data_checksum. The header is 114 bytes of JSON padded with spaces to 120, a multiple of 8.
     * 1.0f = 0x3f800000, -2.0f = 0xc0000000. */
    float values[2] = {1.0f, -2.0f};
    nmt_st_tensor t = {.name = "a", .dtype = NMT_ST_F32, .rank = 1, .shape = {2}, .data = values, .size = 8};
    nmt_st_metadata m = {.key = "k", .value = "v"};
    char *path = temp_path("exact.safetensors");
    ck_assert_int_eq(nmt_st_write(path, &t, 1, &m, 1), 0);
    char *bytes;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    const unsigned char data[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0};
    char json[160];
    snprintf(json, sizeof json,
             "{\"__metadata__\":{\"k\":\"v\",\"data_checksum\":\"%016llx\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
             "\"data_offsets\":[0,8]}}",
             (unsigned long long)nmt_hash_bytes(data, 8));
    ck_assert_uint_eq(strlen(json), 114);
    ck_assert_uint_eq(size, 8 + 120 + 8);
    const unsigned char length[8] = {120, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_mem_eq(bytes, length, 8);
    ck_assert_mem_eq(bytes + 8, json, 114);
    ck_assert_mem_eq(bytes + 8 + 114, "      ", 6);
    ck_assert_mem_eq(bytes + 128, data, 8);
    free(bytes);
    free(path);
}
END_TEST

START_TEST(a_flipped_bit_is_reported_as_damage) {
    float w[4] = {1, 2, 3, 4};
    nmt_st_tensor t = {.name = "w", .dtype = NMT_ST_F32, .rank = 2, .shape = {2, 2}, .data = w, .size = 16};
    nmt_st_metadata m = {.key = "k", .value = "v"};
    char *path = temp_path("flip.safetensors");
    ck_assert_int_eq(nmt_st_write(path, &t, 1, &m, 1), 0);
    char *bytes;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_parse(&f, bytes, size, path), 0);
    ck_assert_int_eq(f.num_metadata, 1); /* the checksum is the format's own: not shown */
    ck_assert_str_eq(f.metadata[0].key, "k");
    nmt_st_free(&f);
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    bytes[size - 3] ^= 0x10;
    ck_assert_int_eq(nmt_atomic_write(path, bytes, size), 0);
    free(bytes);
    ck_assert_int_eq(nmt_st_read(&f, path), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "flip.safetensors: damaged: the tensor data does not match the checksum in its header"));
    /* The writer keeps its key for itself. */
    nmt_st_metadata own = {.key = "data_checksum", .value = "0"};
    ck_assert_int_eq(nmt_st_write(path, &t, 1, &own, 1), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "metadata key 'data_checksum' is the writer's own"));
    free(path);
}
END_TEST

START_TEST(round_trip_keeps_everything) {
    float w[2][3] = {{1, 2, 3}, {4, 5, 6.5f}};
    int64_t step[1] = {1234567890123ll};
    unsigned char raw[5] = {0, 1, 2, 254, 255};
    float scalar = 3.25f;
    nmt_st_tensor ts[] = {
        {.name = "encoder.layers.0.ffn.fc1.weight", .dtype = NMT_ST_F32, .rank = 2, .shape = {2, 3}, .data = w, .size = 24},
        {.name = "step", .dtype = NMT_ST_I64, .rank = 1, .shape = {1}, .data = step, .size = 8},
        {.name = "rng \"state\"\\\n\xc3\xa9", .dtype = NMT_ST_U8, .rank = 1, .shape = {5}, .data = raw, .size = 5},
        {.name = "scalar", .dtype = NMT_ST_F32, .rank = 0, .data = &scalar, .size = 4},
        {.name = "empty", .dtype = NMT_ST_F32, .rank = 2, .shape = {0, 7}, .data = NULL, .size = 0},
    };
    nmt_st_metadata meta[] = {{"format", "nmt-model-1"}, {"quote\"and\\tab\t", "caf\xc3\xa9 \xf0\x9f\x98\x80"}};
    char *path = temp_path("round.safetensors");
    ck_assert_int_eq(nmt_st_write(path, ts, 5, meta, 2), 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    ck_assert_int_eq(f.num_tensors, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(f.tensors[i].name, ts[i].name);
        ck_assert_int_eq(f.tensors[i].dtype, ts[i].dtype);
        ck_assert_int_eq(f.tensors[i].rank, ts[i].rank);
        for (int d = 0; d < ts[i].rank; d++) ck_assert_int_eq(f.tensors[i].shape[d], ts[i].shape[d]);
        ck_assert_uint_eq(f.tensors[i].size, ts[i].size);
        if (ts[i].size) ck_assert_mem_eq(f.tensors[i].data, ts[i].data, ts[i].size);
        /* The data starts 8-aligned; each tensor follows the one before it without a gap. */
        ck_assert_ptr_eq(f.tensors[i].data, i ? (const char *)f.tensors[i - 1].data + ts[i - 1].size
                                              : (const char *)f.blob + f.blob_size - 41);
        if (i == 0) ck_assert_uint_eq((uintptr_t)f.tensors[i].data % 8, 0);
    }
    ck_assert_ptr_eq(nmt_st_find(&f, "step"), &f.tensors[1]);
    ck_assert_ptr_null(nmt_st_find(&f, "missing"));
    ck_assert_str_eq(nmt_st_meta(&f, "format"), "nmt-model-1");
    ck_assert_str_eq(nmt_st_meta(&f, "quote\"and\\tab\t"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
    ck_assert_ptr_null(nmt_st_meta(&f, "other"));
    nmt_st_free(&f);
    free(path);
}
END_TEST

START_TEST(reads_files_laid_out_by_other_writers) {
    /* Tensors listed out of offset order, whitespace everywhere, an odd header length (so data is not
     * aligned), \u escapes including a surrogate pair, an empty metadata object. */
    const char header[] = " {\n \"b\" : {\"shape\": [1], \"data_offsets\": [4, 8], \"dtype\": \"F32\"},\r\n"
                          "\t\"\\u00e9\\ud83d\\ude00\\/\": {\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
                          "\"__metadata__\": {} }  ";
    float data[2] = {7.0f, 8.0f};
    size_t size;
    void *blob = make_blob(header + 1, data, 8, &size); /* the header may not start with a space */
    nmt_st_file f;
    ck_assert_msg(nmt_st_parse(&f, blob, size, "mem.st") == 0, "%s", nmt_error());
    ck_assert_int_eq(f.num_tensors, 2);
    ck_assert_str_eq(f.tensors[0].name, "b");
    ck_assert_str_eq(f.tensors[1].name, "\xc3\xa9\xf0\x9f\x98\x80/");
    float v;
    memcpy(&v, f.tensors[0].data, 4);
    ck_assert_float_eq(v, 8.0f);
    memcpy(&v, f.tensors[1].data, 4);
    ck_assert_float_eq(v, 7.0f);
    ck_assert_int_eq(f.tensors[1].rank, 0);
    ck_assert_int_eq(f.num_metadata, 0);
    nmt_st_free(&f);

    /* No tensors at all is a valid (empty) file. */
    blob = make_blob("{}", NULL, 0, &size);
    ck_assert_int_eq(nmt_st_parse(&f, blob, size, "mem.st"), 0);
    ck_assert_int_eq(f.num_tensors, 0);
    nmt_st_free(&f);
}
END_TEST

START_TEST(damaged_files_are_refused_by_name) {
    float d[4] = {0};
    const char *ok_tensor = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
    char h[512];
    /* Not safetensors at all: a PNG signature read as a length is far larger than the file. */
    const unsigned char png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    nmt_st_file f;
    void *blob = malloc(16);
    memcpy(blob, png, 16);
    ck_assert_int_eq(nmt_st_parse(&f, blob, 16, "mem.st"), -1);
    ck_assert_str_eq(nmt_error(), "mem.st: not a safetensors file, or truncated: the header length 727905341920923785 "
                                  "is larger than the 8 bytes that follow it");
    blob = malloc(3);
    memcpy(blob, "abc", 3);
    ck_assert_int_eq(nmt_st_parse(&f, blob, 3, "mem.st"), -1);
    ck_assert_str_eq(nmt_error(), "mem.st: not a safetensors file: 3 bytes, too short for the header length");
    expect_bad("[1,2]", NULL, 0, "not a safetensors file: the header (5 bytes) is not a JSON object");
    /* Truncated: the data is shorter than the header says, or longer. */
    snprintf(h, sizeof h, "{%s}", ok_tensor);
    expect_bad(h, d, 7, "tensor 'a' ends at data byte 8, past the end of the data (7 bytes): truncated file?");
    expect_bad(h, d, 12, "the tensors hold 8 data bytes but the file has 12 after the header");
    /* Offsets: a gap, an overlap, backwards, beyond the data. */
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d, 8,
               "tensor 'a' starts at data byte 4, but the tensor before it ends at 0 (a gap)");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", d, 8,
               "tensor 'b' starts at data byte 4, but the tensor before it ends at 8 (an overlap)");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}}", d, 8, "tensor 'a': data_offsets [8, 0] run backwards");
    /* Shape times dtype size must equal the byte range. */
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", d, 8,
               "tensor 'a': its shape and dtype need 12 bytes but data_offsets [0, 8] hold 8");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}", d, 8,
               "tensor 'a': its shape is too large for memory");
    /* Header contents. */
    snprintf(h, sizeof h, "{%s,%s}", ok_tensor, ok_tensor);
    expect_bad(h, d, 8, "tensor 'a' appears twice");
    expect_bad("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}", d, 8,
               "bad safetensors header at byte 22: tensor 'a': dtype F16 is not one nmt reads (F32, I64, U8, I8)");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,2],\"data_offsets\":[0,8]}}", d, 8, "a shape has more than 4 entries");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", d, 8, "tensor 'a' lacks data_offsets");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"extra\":1}}", d, 8,
               "tensor 'a': unexpected or repeated field 'extra'");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"shape\":[2],\"data_offsets\":[0,8]}}", d, 8,
               "unexpected or repeated field 'shape'");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", d, 8, "expected an integer, found a fraction");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", d, 8, "expected a non-negative integer");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", d, 8, "a number with a leading zero");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,8]}}", d, 8, "number too large");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", d, 8, "data_offsets needs [begin, end]");
    snprintf(h, sizeof h, "{%s,}", ok_tensor);
    expect_bad(h, d, 8, "bad safetensors header at byte 62: expected a string");
    snprintf(h, sizeof h, "{%s} x", ok_tensor);
    expect_bad(h, d, 8, "unexpected text after the JSON value");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", d, 8, "expected '}', found the end of the input");
    expect_bad("{\"a\x01\":{}}", d, 8, "control character 0x01 in a string");
    expect_bad("{\"a\\u0000\":{}}", d, 8, "a string holds \\u0000 or an unpaired surrogate");
    expect_bad("{\"a\\ud800\":{}}", d, 8, "unpaired surrogate");
    expect_bad("{\"a\\x\":{}}", d, 8, "bad escape in a string");
    expect_bad("{\"a\xff\":{}}", d, 8, "bad safetensors header at byte 11: invalid UTF-8");
    expect_bad("{\"a:{}}", d, 8, "unterminated string");
    expect_bad("{\"\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", d, 8, "a tensor with an empty name");
    expect_bad("{\"__metadata__\":{\"k\":1}}", NULL, 0, "expected a string");
    expect_bad("{\"__metadata__\":{\"k\":\"1\",\"j\":\"\",\"k\":\"2\"}}", NULL, 0, "metadata key 'k' appears twice");
    expect_bad("{\"__metadata__\":{},\"__metadata__\":{}}", NULL, 0, "__metadata__ appears twice");
}
END_TEST

START_TEST(files_on_disk_truncated_or_missing) {
    float w[4] = {1, 2, 3, 4};
    nmt_st_tensor t = {.name = "w", .dtype = NMT_ST_F32, .rank = 2, .shape = {2, 2}, .data = w, .size = 16};
    char *path = temp_path("trunc.safetensors");
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), 0);
    const long header = 112; /* {"__metadata__":{"data_checksum":"..."},"w":{...}}: 109 bytes, padded */
    ck_assert_int_eq(truncate(path, 8 + header + 15), 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), path));
    ck_assert_ptr_nonnull(strstr(nmt_error(), "past the end of the data (15 bytes): truncated file?"));
    ck_assert_int_eq(truncate(path, 20), 0);
    ck_assert_int_eq(nmt_st_read(&f, path), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "the header length 112 is larger than the 12 bytes that follow it"));
    free(path);
    ck_assert_int_eq(nmt_st_read(&f, "/nonexistent/model.safetensors"), -1);
    ck_assert_str_eq(nmt_error(), "/nonexistent/model.safetensors: cannot open: No such file or directory");
    ck_assert_int_eq(nmt_st_read(&f, "/tmp"), -1);
    ck_assert_str_eq(nmt_error(), "/tmp: not a regular file (a directory)");
}
END_TEST

/* A mapped file read again later: unchanged while it is what was read; rewritten in place with other
 * data of the same size, or truncated, it is refused by name (never read, so never a SIGBUS); one
 * replaced by a new file renamed over it leaves the mapped one intact. */
START_TEST(a_mapped_file_rewritten_in_place_is_refused) {
    float w[1024], v[1024];
    for (int i = 0; i < 1024; i++) w[i] = (float)i, v[i] = (float)-i;
    nmt_st_tensor t = {.name = "w", .dtype = NMT_ST_F32, .rank = 2, .shape = {32, 32}, .data = w, .size = sizeof w};
    char *path = temp_path("mapped.safetensors");
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    ck_assert_int_eq(nmt_st_unchanged(&f), 0);
    t.data = v;
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), 0); /* a new file under the same name */
    ck_assert_int_eq(nmt_st_unchanged(&f), 0);
    ck_assert_mem_eq(f.tensors[0].data, w, sizeof w);
    nmt_st_free(&f);

    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    char *bytes;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    bytes[size - 5] ^= 0x40;
    FILE *fp = fopen(path, "wb"); /* as cp writes: the same file, truncated and written again */
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(bytes, 1, size, fp), size);
    ck_assert_int_eq(fclose(fp), 0);
    ck_assert_int_eq(nmt_st_unchanged(&f), -1);
    ck_assert_msg(strstr(nmt_error(), "mapped.safetensors: changed on disk since it was loaded") &&
                      strstr(nmt_error(), ", other data)"),
                  "%s", nmt_error());
    ck_assert_int_eq(truncate(path, (off_t)size / 2), 0);
    ck_assert_int_eq(nmt_st_unchanged(&f), -1);
    char want[64];
    snprintf(want, sizeof want, "(%zu bytes then, %zu now)", size, size / 2);
    ck_assert_msg(strstr(nmt_error(), want), "%s", nmt_error());
    nmt_st_free(&f);
    free(bytes);

    /* Parsed in memory, a file has nothing to be read again. */
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), 0);
    ck_assert_int_eq(nmt_read_file(path, &bytes, &size), 0);
    ck_assert_int_eq(nmt_st_parse(&f, bytes, size, path), 0);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(nmt_st_unchanged(&f), 0);
    nmt_st_free(&f);
    free(path);
}
END_TEST

START_TEST(failed_write_keeps_the_old_file) {
    float a = 1, b = 2;
    nmt_st_tensor t = {.name = "x", .dtype = NMT_ST_F32, .rank = 1, .shape = {1}, .data = &a, .size = 4};
    char *path = temp_path("keep.safetensors");
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), 0);
    t.data = &b;
    for (int n = 1; n <= 3; n++) { /* the length, the header, the data */
        nmt_io_fault_set("write", n);
        ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), -1);
        ck_assert_ptr_nonnull(strstr(nmt_error(), "injected"));
    }
    nmt_io_fault_set("write", 0);
    nmt_st_file f;
    ck_assert_int_eq(nmt_st_read(&f, path), 0);
    ck_assert_float_eq(*(const float *)f.tensors[0].data, 1.0f);
    nmt_st_free(&f);
    /* A size that disagrees with the shape is refused before anything is written. */
    t.size = 8;
    ck_assert_int_eq(nmt_st_write(path, &t, 1, NULL, 0), -1);
    ck_assert_str_eq(strstr(nmt_error(), "tensor 'x'"), "tensor 'x': 8 bytes given, its shape and dtype need 4");
    /* So are names a reader would refuse. */
    t.size = 4;
    nmt_st_tensor two[2] = {t, t};
    ck_assert_int_eq(nmt_st_write(path, two, 2, NULL, 0), -1);
    ck_assert_str_eq(strstr(nmt_error(), "tensor 'x'"), "tensor 'x' appears twice");
    two[1].name = "__metadata__";
    ck_assert_int_eq(nmt_st_write(path, two, 2, NULL, 0), -1);
    ck_assert_str_eq(strstr(nmt_error(), "'__"), "'__metadata__' cannot name a tensor");
    nmt_st_metadata meta[3] = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
    ck_assert_int_eq(nmt_st_write(path, &t, 1, meta, 3), -1);
    ck_assert_str_eq(strstr(nmt_error(), "metadata"), "metadata key 'a' appears twice");
    free(path);
}
END_TEST

/* Every single-byte change and every truncation of a valid file either parses or fails with a
 * message; none may crash or read out of bounds (ASan watches). */
START_TEST(mutations_never_crash) {
    float w[6] = {1, 2, 3, 4, 5, 6};
    int64_t s = 5;
    nmt_st_tensor ts[] = {{.name = "w", .dtype = NMT_ST_F32, .rank = 2, .shape = {2, 3}, .data = w, .size = 24},
                          {.name = "s\\u", .dtype = NMT_ST_I64, .rank = 1, .shape = {1}, .data = &s, .size = 8}};
    nmt_st_metadata m = {"k", "v\xc3\xa9"};
    char *path = temp_path("fuzz.safetensors");
    ck_assert_int_eq(nmt_st_write(path, ts, 2, &m, 1), 0);
    char *good;
    size_t size;
    ck_assert_int_eq(nmt_read_file(path, &good, &size), 0);
    const unsigned char values[] = {0x00, 0xff, '"', '\\', '{', '}', '[', ']', ',', ':', '0', '9', ' ', 0x80};
    int parsed = 0, refused = 0;
    for (size_t at = 0; at <= size; at++) {
        for (size_t v = 0; v <= sizeof values; v++) {
            size_t n = v == sizeof values ? at : size; /* the last round truncates instead */
            if (v < sizeof values && at == size) continue;
            unsigned char *blob = malloc(n ? n : 1);
            memcpy(blob, good, n);
            if (v < sizeof values) blob[at] = values[v];
            nmt_st_file f;
            if (nmt_st_parse(&f, blob, n, "fuzz") == 0) {
                parsed++;
                nmt_st_free(&f);
            } else {
                ck_assert(strncmp(nmt_error(), "fuzz: ", 6) == 0);
                refused++;
            }
        }
    }
    ck_assert_int_gt(parsed, 0);
    ck_assert_int_gt(refused, (int)size);
    free(good);
    free(path);
}
END_TEST

static int read_and_free(void *path) {
    nmt_st_file f;
    if (nmt_st_read(&f, path) < 0) return -1;
    nmt_st_free(&f);
    return 0;
}

START_TEST(every_allocation_failure_is_reported) {
    float w[2] = {1, 2};
    nmt_st_tensor ts[] = {{.name = "a", .dtype = NMT_ST_F32, .rank = 1, .shape = {1}, .data = w, .size = 4},
                          {.name = "b", .dtype = NMT_ST_F32, .rank = 1, .shape = {1}, .data = w + 1, .size = 4}};
    nmt_st_metadata m = {"k", "v"};
    char *path = temp_path("alloc.safetensors");
    ck_assert_int_eq(nmt_st_write(path, ts, 2, &m, 1), 0);
    ck_assert_int_ge(nmt_test_alloc_sweep(read_and_free, path), 6);
    free(path);
}
END_TEST

int main(void) {
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_create("safetensors");
    tcase_add_test(tc, writes_the_exact_bytes_of_the_format);
    tcase_add_test(tc, a_flipped_bit_is_reported_as_damage);
    tcase_add_test(tc, round_trip_keeps_everything);
    tcase_add_test(tc, reads_files_laid_out_by_other_writers);
    tcase_add_test(tc, damaged_files_are_refused_by_name);
    tcase_add_test(tc, files_on_disk_truncated_or_missing);
    tcase_add_test(tc, a_mapped_file_rewritten_in_place_is_refused);
    tcase_add_test(tc, failed_write_keeps_the_old_file);
    tcase_add_test(tc, mutations_never_crash);
    tcase_add_test(tc, every_allocation_failure_is_reported);
    tcase_add_checked_fixture(tc, nmt_test_tmpdir_make, nmt_test_tmpdir_remove);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
