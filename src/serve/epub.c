/* epub: an EPUB's chapters found through its container and package document (epub.h). */
#include "serve/epub.h"

#include "base/util.h"

#include <stdio.h>
#include <string.h>

enum { VALUE_MAX = 1024 };

/* The next tag whose local name (after any prefix) is `local`, in s[*at, n): its bounds [*begin, *end). */
static int next_tag(const char *s, size_t n, size_t *at, const char *local, size_t *begin, size_t *end) {
    const size_t l = strlen(local);
    for (size_t i = *at; i < n; i++) {
        if (s[i] != '<') continue;
        size_t k = i + 1, name = k;
        while (k < n && s[k] != ' ' && s[k] != '\t' && s[k] != '\n' && s[k] != '\r' && s[k] != '>' && s[k] != '/') {
            if (s[k] == ':') name = k + 1;
            k++;
        }
        if (k - name != l || memcmp(s + name, local, l) != 0) continue;
        const char *gt = memchr(s + k, '>', n - k);
        if (!gt) return 0;
        *begin = i;
        *end = (size_t)(gt - s) + 1;
        *at = *end;
        return 1;
    }
    return 0;
}

/* Attribute `name` of the tag s[begin, end) into value (cut to VALUE_MAX - 1 bytes); 0 when it has none. */
static int attribute(const char *s, size_t begin, size_t end, const char *name, char value[VALUE_MAX]) {
    const size_t l = strlen(name);
    for (size_t i = begin + 1; i + l < end; i++) {
        if (memcmp(s + i, name, l) != 0 || !strchr(" \t\r\n", s[i - 1])) continue;
        size_t k = i + l;
        while (k < end && strchr(" \t\r\n", s[k])) k++;
        if (k >= end || s[k] != '=') continue;
        for (k++; k < end && strchr(" \t\r\n", s[k]);) k++;
        if (k >= end || (s[k] != '"' && s[k] != '\'')) continue;
        const char quote = s[k++];
        size_t v = 0;
        for (; k < end && s[k] != quote; k++)
            if (v < VALUE_MAX - 1) value[v++] = s[k];
        value[v] = '\0';
        return 1;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix) {
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The entry named dir + href (its fragment cut), or -1. */
static int entry_of(const nmt_zip_mem *zip, const char *dir, size_t dir_len, const char *href) {
    char path[2 * VALUE_MAX];
    snprintf(path, sizeof path, "%.*s%.*s", (int)dir_len, dir, (int)strcspn(href, "#"), href);
    for (int i = 0; i < zip->count; i++)
        if (strcmp(zip->entries[i].name, path) == 0) return i;
    return -1;
}

int nmt_serve_epub_chapters(const nmt_zip_mem *zip, const char *file, int *chapters, int *count) {
    *count = 0;
    const nmt_zip_entry *container = nmt_zip_mem_find(zip, "META-INF/container.xml");
    if (!container) return nmt_error_set("%s: no META-INF/container.xml (not an EPUB)", file);
    char opf_path[VALUE_MAX], value[VALUE_MAX];
    size_t at = 0, begin, end;
    const char *c = (const char *)container->data;
    if (!next_tag(c, container->size, &at, "rootfile", &begin, &end) ||
        !attribute(c, begin, end, "full-path", opf_path))
        return nmt_error_set("%s: META-INF/container.xml names no rootfile full-path", file);
    const nmt_zip_entry *opf = nmt_zip_mem_find(zip, opf_path);
    if (!opf) return nmt_error_set("%s: no %s, the package document its container names", file, opf_path);
    const char *s = (const char *)opf->data, *slash = strrchr(opf_path, '/');
    const size_t dir_len = slash ? (size_t)(slash - opf_path) + 1 : 0;
    int listed = 0;
    for (size_t spine = 0, ref_begin, ref_end; next_tag(s, opf->size, &spine, "itemref", &ref_begin, &ref_end);) {
        if (!attribute(s, ref_begin, ref_end, "idref", value)) continue;
        listed++;
        char id[VALUE_MAX], href[VALUE_MAX], type[VALUE_MAX];
        for (size_t m = 0; next_tag(s, opf->size, &m, "item", &begin, &end);) {
            if (!attribute(s, begin, end, "id", id) || strcmp(id, value) != 0) continue;
            if (!attribute(s, begin, end, "href", href)) break;
            if (!attribute(s, begin, end, "media-type", type)) type[0] = '\0';
            const int entry = entry_of(zip, opf_path, dir_len, href);
            int seen = entry < 0;
            for (int k = 0; k < *count && !seen; k++) seen = chapters[k] == entry;
            if (!seen && (strcmp(type, "application/xhtml+xml") == 0 || ends_with(href, ".xhtml") ||
                          ends_with(href, ".html") || ends_with(href, ".htm")))
                chapters[(*count)++] = entry;
            break;
        }
    }
    if (!listed) return nmt_error_set("%s: %s: its spine lists no item", file, opf_path);
    return 0;
}
