/* argos: Argos Translate packages (argos.h). */
#include "model/argos.h"

#include "model/ct2.h"
#include "base/io.h"
#include "base/json.h"
#include "base/util.h"
#include "base/zip.h"
#include "base/zip_dir.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const size_t max_unpacked = (size_t)4 << 30;

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 1 when dir holds metadata.json and model/model.bin. */
static int is_folder(const char *dir) {
    char *meta = nmt_path_join(dir, "metadata.json"), *bin = nmt_path_join(dir, "model/model.bin");
    const int found = meta && bin && nmt_file_exists(meta) && nmt_file_exists(bin);
    free(meta);
    free(bin);
    return found;
}

int nmt_argos_is_package(const char *path) {
    const size_t len = strlen(path), suffix = strlen(".argosmodel");
    if (is_dir(path)) return is_folder(path);
    return len > suffix && strcmp(path + len - suffix, ".argosmodel") == 0 && nmt_zip_is_archive(path);
}

/* Checks that metadata.json is a JSON object whose from_code and to_code are strings; gives them in
 * *from and *to when those are not NULL. */
static int check_metadata(const char *dir, char **from, char **to) {
    char *path = nmt_path_join(dir, "metadata.json"), *text = NULL, *key = NULL;
    size_t len;
    int rc = -1, codes = 0;
    nmt_json j;
    if (!path || nmt_read_regular_file(path, 1 << 20, "Argos package metadata", &text, &len) < 0 ||
        nmt_json_init(&j, text, len, path, "package metadata", 0, 0) < 0 || nmt_json_expect(&j, '{') < 0)
        goto done;
    if (!nmt_json_accept(&j, '}')) do {
        free(key);
        key = NULL;
        if (nmt_json_string(&j, &key) < 0 || nmt_json_expect(&j, ':') < 0) goto done;
        if (strcmp(key, "from_code") == 0 || strcmp(key, "to_code") == 0) {
            char *code;
            if (nmt_json_peek(&j) != '"') {
                nmt_json_error(&j, "%s must be a string", key);
                goto done;
            }
            if (nmt_json_string(&j, &code) < 0) goto done;
            char **keep = strcmp(key, "from_code") == 0 ? from : to;
            if (keep) {
                free(*keep);
                *keep = code;
            } else {
                free(code);
            }
            codes++;
        } else if (nmt_json_skip_value(&j) < 0) {
            goto done;
        }
    } while (nmt_json_accept(&j, ','));
    if (nmt_json_expect(&j, '}') < 0 || nmt_json_end(&j) < 0) goto done;
    rc = codes == 2 ? 0 : nmt_error_set("%s: from_code or to_code is missing", path);
done:
    free(key);
    free(text);
    free(path);
    return rc;
}

static int open_folder(const char *dir, nmt_model *model, nmt_spm **spm) {
    char *ct2 = nmt_path_join(dir, "model"), *pieces = nmt_path_join(dir, "sentencepiece.model");
    int rc = -1;
    if (ct2 && pieces && check_metadata(dir, NULL, NULL) == 0) {
        if (!nmt_file_exists(pieces)) nmt_error_set("%s: missing (an Argos package has its SentencePiece model there)", pieces);
        else rc = nmt_ct2_open(ct2, pieces, model, spm);
    }
    free(ct2);
    free(pieces);
    return rc;
}

/* The package folder in an extracted archive: its root, or its one folder that is a package. */
static char *package_root(const char *dir) {
    if (is_folder(dir)) return nmt_strdup(dir);
    DIR *d = opendir(dir);
    char *found = NULL;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char *sub = nmt_path_join(dir, e->d_name);
        if (sub && is_folder(sub)) found = sub;
        else free(sub);
    }
    if (d) closedir(d);
    return found;
}

int nmt_argos_unpack(const char *path, char **tmp, char **root) {
    *tmp = *root = NULL;
    if (is_dir(path)) return (*root = nmt_strdup(path)) ? 0 : -1;
    if (!(*tmp = nmt_temp_dir_create("nmt-argos")) || nmt_zip_dir_extract(path, *tmp, max_unpacked) < 0) goto fail;
    if ((*root = package_root(*tmp))) return 0;
    nmt_error_set("%s: no metadata.json with model/model.bin in the archive (not an Argos package?)", path);
fail:
    if (*tmp) nmt_remove_tree(*tmp);
    free(*tmp);
    *tmp = NULL;
    return -1;
}

int nmt_argos_languages(const char *dir, char **from, char **to) {
    *from = *to = NULL;
    if (check_metadata(dir, from, to) == 0) return 0;
    free(*from);
    free(*to);
    *from = *to = NULL;
    return -1;
}

int nmt_argos_open(const char *path, nmt_model *model, nmt_spm **spm) {
    memset(model, 0, sizeof *model);
    *spm = NULL;
    char *tmp, *root;
    if (nmt_argos_unpack(path, &tmp, &root) < 0) return -1;
    const int rc = open_folder(root, model, spm);
    if (tmp) nmt_remove_tree(tmp);
    free(tmp);
    free(root);
    return rc;
}
