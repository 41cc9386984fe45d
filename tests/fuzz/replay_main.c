/* replay_main: runs a fuzz harness over files without libFuzzer, so that any compiler (and CI) can
 * replay the seed corpus and every regression input kept in tests/fuzz/corpus/<target>/.
 *
 *   fuzz_<target> PATH...   each PATH a file, or a directory whose regular files are run in name order
 *
 * Each input is copied into a buffer of exactly its size, so that a read past its end is caught by
 * AddressSanitizer as it is under libFuzzer. Exit status 0 when every input ran; a harness that finds
 * a violated property aborts. A directory without inputs is an error (a test that ran nothing must
 * not pass).
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int run_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) {
        fclose(fp);
        fprintf(stderr, "%s: cannot stat: %s\n", path, strerror(errno));
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (!data || fread(data, 1, size, fp) != size) {
        fclose(fp);
        free(data);
        fprintf(stderr, "%s: cannot read\n", path);
        return -1;
    }
    fclose(fp);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs every regular file of a directory in name order; returns how many ran, or -1. */
static long run_directory(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *entry;
    while ((entry = readdir(d))) {
        if (entry->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (!grown) abort();
            names = grown;
        }
        size_t n = strlen(dir) + strlen(entry->d_name) + 2;
        names[count] = malloc(n);
        if (!names[count]) abort();
        snprintf(names[count++], n, "%s/%s", dir, entry->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, compare_names);
    long ran = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(names[i]) < 0) ran = -1;
            else if (ran >= 0) ran++;
        }
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIRECTORY...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long ran = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? run_directory(argv[i])
                   : run_file(argv[i]) == 0   ? 1
                                              : -1;
        if (ran <= 0) {
            fprintf(stderr, "%s: %s\n", argv[i], ran == 0 ? "no inputs" : "failed");
            return 1;
        }
        total += ran;
    }
    fprintf(stderr, "%s: %ld inputs ran\n", argv[0], total);
    return 0;
}
