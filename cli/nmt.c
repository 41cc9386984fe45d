/* nmt: the command-line program. Dispatches `nmt <command> ...` to cli/cmd_<command>.c. */
#include "cli.h"

#include "nmt/version.h"

#ifdef NMT_HAVE_MPI
#include "base/comm_mpi.h"
#endif

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define NMT_COMMAND(name)                          \
    int nmt_cmd_##name(int argc, char **argv);     \
    extern const char nmt_cmd_##name##_summary[];
#include "commands.inc"
#undef NMT_COMMAND

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
#define NMT_COMMAND(name) {#name, nmt_cmd_##name, nmt_cmd_##name##_summary},
#include "commands.inc"
#undef NMT_COMMAND
    {NULL, NULL, NULL},
};

static void print_help(FILE *out) {
    fprintf(out,
            "nmt %s: neural machine translation with the Transformer, on the CPU\n"
            "\n"
            "Usage: nmt <command> [options]     (nmt <command> --help for its options)\n"
            "\n"
            "Commands:\n",
            NMT_VERSION);
    for (const command *c = commands; c->name; c++) fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out,
            "  %-10s %s\n  %-10s %s\n"
            "\n"
            "Every command takes -q/--quiet (errors only) and --help; --threads defaults to the CPUs this\n"
            "process may use. Options are matched by their exact names, never by abbreviation.\n"
            "\n"
            "Exit status: 0 success, 1 failure, 2 usage error; `nmt train` interrupted by SIGINT or SIGTERM\n"
            "(checkpoint written, resumable): 130 or 143. When the reader of the output goes away (`| head`),\n"
            "nmt ends quietly, killed by SIGPIPE as cat or grep are (a shell reports 141).\n",
            "help", "show this help", "--version", "print the version");
}

static int dispatch(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return NMT_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            for (const command *c = commands; c->name; c++) {
                char *sub_argv[] = {(char *)c->name, "--help", NULL};
                if (strcmp(c->name, argv[2]) == 0) return c->run(2, sub_argv);
            }
            fprintf(stderr, "nmt: unknown command '%s'\nTry 'nmt help'.\n", argv[2]);
            return NMT_EXIT_USAGE;
        }
        print_help(stdout);
        return NMT_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("nmt %s\n", NMT_VERSION);
        return NMT_EXIT_OK;
    }
    for (const command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "nmt: unknown command '%s'\nTry 'nmt help'.\n", name);
    return NMT_EXIT_USAGE;
}

/* Output that could not be written (a full disk: `nmt --help >/dev/full`) fails a command that
 * otherwise succeeded; commands that check their own writes have reported it already. */
int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_DFL); /* even when the parent ignored it: one quiet convention for a closed pipe */
#ifdef NMT_HAVE_MPI
    nmt_comm_use(&nmt_comm_mpi); /* `mpirun ... nmt train`: libnmt itself has no MPI */
#endif
    int status = dispatch(argc, argv);
    if (status == NMT_EXIT_OK && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "nmt: <stdout>: write failed: %s\n", strerror(errno));
        status = NMT_EXIT_FAILURE;
    }
    return status;
}
