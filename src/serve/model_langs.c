/* model_langs: a served model's language pair from the command line, its training config or its
 * Argos package metadata (see model_langs.h). */
#include "serve/model_langs.h"

#include "base/io.h"
#include "base/json.h"
#include "base/util.h"
#include "base/zip.h"
#include "base/zip_dir.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_UNPACKED = 1 << 30 }; /* bytes an archive may unpack to while its metadata is read (1 GiB) */

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* from_code and to_code of DIR/metadata.json into source and target (those still empty). 1 when the
 * file is there and read, 0 when there is none, -1 on errors. */
static int read_metadata(const char *dir, char *source, char *target) {
    char *path = nmt_path_join(dir, "metadata.json"), *text = NULL, *key = NULL, *code = NULL;
    size_t len;
    int rc = -1;
    nmt_json j;
    if (!path) return -1;
    if (!nmt_file_exists(path)) {
        free(path);
        return 0;
    }
    if (nmt_read_regular_file(path, 1 << 20, "Argos package metadata", &text, &len) < 0 ||
        nmt_json_init(&j, text, len, path, "package metadata", 0, 0) < 0 || nmt_json_expect(&j, '{') < 0)
        goto done;
    if (!nmt_json_accept(&j, '}')) do {
            free(key);
            free(code);
            key = code = NULL;
            if (nmt_json_string(&j, &key) < 0 || nmt_json_expect(&j, ':') < 0) goto done;
            const int from = strcmp(key, "from_code") == 0, to = strcmp(key, "to_code") == 0;
            if (!from && !to) {
                if (nmt_json_skip_value(&j) < 0) goto done;
                continue;
            }
            if (nmt_json_peek(&j) != '"') {
                nmt_json_error(&j, "%s must be a string", key);
                goto done;
            }
            if (nmt_json_string(&j, &code) < 0) goto done;
            char *field = from ? source : target;
            if (!field[0]) snprintf(field, NMT_LANGCODE_MAX, "%.*s", NMT_LANGCODE_MAX - 1, code);
        } while (nmt_json_accept(&j, ','));
    if (nmt_json_expect(&j, '}') < 0 || nmt_json_end(&j) < 0) goto done;
    rc = 1;
done:
    free(key);
    free(code);
    free(text);
    free(path);
    return rc;
}

/* The metadata of a package unpacked into dir: at its root or in its one top-level folder. */
static int read_unpacked(const char *dir, char *source, char *target) {
    const int found = read_metadata(dir, source, target);
    if (found != 0) return found;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char *sub = nmt_path_join(dir, e->d_name);
        rc = !sub ? -1 : is_dir(sub) ? read_metadata(sub, source, target) : 0;
        free(sub);
    }
    closedir(d);
    return rc;
}

int nmt_serve_model_langs(const char *path, const nmt_engine *engine, const char *given_source,
                          const char *given_target, char *source, char *target) {
    const char *recorded_source = nmt_engine_source_language(engine),
               *recorded_target = nmt_engine_target_language(engine);
    snprintf(source, NMT_LANGCODE_MAX, "%s", given_source ? given_source : recorded_source ? recorded_source : "");
    snprintf(target, NMT_LANGCODE_MAX, "%s", given_target ? given_target : recorded_target ? recorded_target : "");
    if (source[0] && target[0]) return 0;
    if (is_dir(path)) return read_metadata(path, source, target) < 0 ? -1 : 0;
    const size_t len = strlen(path), suffix = strlen(".argosmodel");
    if (len <= suffix || strcmp(path + len - suffix, ".argosmodel") != 0 || !nmt_zip_is_archive(path)) return 0;
    char *tmp = nmt_temp_dir_create("nmt-serve-argos");
    const int rc = tmp && nmt_zip_dir_extract(path, tmp, MAX_UNPACKED) == 0 && read_unpacked(tmp, source, target) >= 0;
    if (tmp) nmt_remove_tree(tmp);
    free(tmp);
    return rc ? 0 : -1;
}
