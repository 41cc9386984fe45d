/* argos_write: an Argos Translate package written (argos_write.h). */
#include "model/argos_write.h"

#include "base/io.h"
#include "base/json.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "base/zip_dir.h"

#include <stdlib.h>
#include <string.h>

static const char suffix[] = ".argosmodel";

static void field(nmt_strbuf *b, const char *key, const char *value, int last) {
    nmt_strbuf_printf(b, "  \"%s\": ", key);
    nmt_json_append_string(b, value);
    nmt_strbuf_puts(b, last ? "\n" : ",\n");
}

static int write_metadata(const char *dir, const nmt_argos_package *p) {
    nmt_strbuf b = {0};
    nmt_strbuf_puts(&b, "{\n");
    field(&b, "package_version", "1.0", 0);
    field(&b, "argos_version", "1.0", 0);
    field(&b, "from_code", p->from_code, 0);
    field(&b, "from_name", p->from_name ? p->from_name : p->from_code, 0);
    field(&b, "to_code", p->to_code, 0);
    field(&b, "to_name", p->to_name ? p->to_name : p->to_code, 0);
    field(&b, "type", "translate", 1);
    nmt_strbuf_puts(&b, "}\n");
    char *path = nmt_path_join(dir, "metadata.json");
    const int rc = !path || b.failed ? -1 : nmt_atomic_write(path, b.data, b.len);
    free(path);
    nmt_strbuf_free(&b);
    return rc;
}

/* The archive's top-level folder: its file name without directories and the suffix. */
static char *folder_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const size_t len = strlen(base);
    if (len <= sizeof suffix - 1 || strcmp(base + len - (sizeof suffix - 1), suffix) != 0) {
        nmt_error_set("%s: an Argos package's name ends in %s", path, suffix);
        return NULL;
    }
    char *name = nmt_strdup(base);
    if (name) name[len - (sizeof suffix - 1)] = '\0';
    return name;
}

int nmt_argos_write(const char *path, const nmt_model *model, const nmt_spm *spm, const nmt_argos_package *p) {
    if (!p->from_code || !*p->from_code || !p->to_code || !*p->to_code)
        return nmt_error_set("%s: an Argos package needs its source and target language codes", path);
    char *name = folder_name(path), *tmp = NULL, *ct2 = NULL, *pieces = NULL;
    int rc = -1;
    if (!name || !(tmp = nmt_temp_dir_create("nmt-argos-write"))) goto done;
    if (!(ct2 = nmt_path_join(tmp, "model")) || !(pieces = nmt_path_join(tmp, "sentencepiece.model"))) goto done;
    if (nmt_mkdirs(ct2) < 0 || nmt_ct2_write(ct2, model, spm, p->quantization) < 0 ||
        nmt_copy_file(p->spm_path, pieces) < 0 || write_metadata(tmp, p) < 0)
        goto done;
    rc = nmt_zip_dir_write(tmp, name, path);
done:
    if (tmp) nmt_remove_tree(tmp);
    free(tmp);
    free(ct2);
    free(pieces);
    free(name);
    return rc;
}
