/* nmt serve: an HTTP translation server (LibreTranslate, OpenNMT-py and native APIs) over one or
 * more models. Only flags live here: the engine is include/nmt/nmt.h's, the server src/serve/server.c,
 * a model's languages src/serve/model_langs.c.
 */
#include "cli.h"

#include "base/util.h"
#include "nmt/nmt.h"
#include "serve/model_langs.h"
#include "serve/server.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char nmt_cmd_serve_summary[] = "serve translations over HTTP (LibreTranslate and OpenNMT-py APIs, batching)";

static void usage(FILE *out) {
    fprintf(out,
            "Usage: nmt serve -m MODEL [--source-lang CODE --target-lang CODE] [-m MODEL ...]\n"
            "                 [--host 127.0.0.1] [--port 5000] [options]\n"
            "\n"
            "Serves translations over HTTP: LibreTranslate's POST /translate, POST /translate_file\n"
            "(.txt, .html), POST /detect, GET /languages and GET /frontend/settings, OpenNMT-py's\n"
            "POST /translator/translate (its id: the model's place among the -m), POST /v1/translate\n"
            "(n-best, scores, alignment), GET /health, GET /metrics (Prometheus) and a page at GET /.\n"
            "Lines of concurrent requests are decoded together; each line's translation is what\n"
            "`nmt translate` gives it.\n"
            "Prints `listening on http://HOST:PORT` on stderr; SIGTERM or SIGINT stops accepting,\n"
            "lets the requests in flight finish for --drain-s seconds, closes the rest and exits 0.\n"
            "docs/serving-limits.md describes every limit and how the server refuses.\n"
            "\n"
            "  -m, --model MODEL         a model directory written by `nmt train`, a CTranslate2\n"
            "                            directory or an Argos package; repeated: one model a\n"
            "                            language pair (at most 64), a pair without a model\n"
            "                            translated through English where both steps are served\n"
            "      --host ADDR           address to bind (default 127.0.0.1; 0.0.0.0 for every one)\n"
            "      --port N              port (default 5000; 0 takes a free one)\n"
            "      --threads N           decoding threads (default: the CPUs this process may use)\n"
            "  -k, --beam-size K         beam size (default 5)\n"
            "      --n-best N            most hypotheses a request may get (LibreTranslate\n"
            "                            alternatives + 1, native n_best; default: the beam size)\n"
            "      --length-penalty A    GNMT length penalty (default 0.6)\n"
            "      --max-length-ratio R  at most R * source pieces + 10 target pieces (default 2)\n"
            "      --max-input-length N  a segment (line or sentence) of more than N source pieces\n"
            "                            is refused with 400, never cropped (default 1000)\n"
            "      --precision P         fp32, bf16, int8 or auto (as nmt translate; default: as the model\n"
            "                            was written, int8 for an int8 directory)\n"
            "      --max-batch N         lines decoded together (default 64), one part of them\n"
            "                            per thread\n"
            "      --batch-wait-ms MS    longest wait for a fuller batch after a line arrives\n"
            "                            or the last batch ends (default 5)\n"
            "      --char-limit N        characters per text on /translate (more: 400, as\n"
            "                            LibreTranslate), per request elsewhere (413); 0 = none\n"
            "      --max-queue N         lines waiting at most, 0 = none (default 0); more: 503\n"
            "      --max-queue-bytes B   bytes of text waiting at most, 0 = none (default 67108864);\n"
            "                            more: 503 (413 for a request larger than that alone)\n"
            "      --timeout-s S         a request's longest wait, 0 = none (default 0); then 504\n"
            "      --max-body BYTES      request body size limit (default 1048576); more: 413\n"
            "      --header-timeout-s S  longest time a request's headers may take (default 10)\n"
            "      --body-timeout-s S    longest time a request's body may take (default 60)\n"
            "      --drain-s S           after SIGTERM, longest wait for requests in flight\n"
            "                            (default 30)\n"
            "      --max-connections N   open connections at most (default 1024)\n"
            "      --max-connections-per-client N\n"
            "                            from one client address at most, less than\n"
            "                            --max-connections (default 64)\n"
            "      --api-keys FILE       require one of the keys in FILE (one a line): the body's\n"
            "                            api_key, or the X-API-Key or Authorization: Bearer header\n"
            "      --source-lang CODE    the source language of the -m before it (default: the\n"
            "                            model's data.src_lang, or an Argos package's from_code;\n"
            "                            required for a CTranslate2 directory)\n"
            "      --target-lang CODE    the target language of the -m before it (the same way)\n"
            "      --no-sentence-split   translate each line whole (by default a line is cut after\n"
            "                            '.', '!', '?' followed by a space and a capital letter)\n"
            "  -q, --quiet               no access log (one JSON line per request on stderr)\n"
            "  -h, --help                show this help\n");
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* A -m and the languages given after it. */
typedef struct model_arg {
    const char *path, *source, *target;
} model_arg;

typedef struct args {
    model_arg models[NMT_SERVE_MAX_MODELS];
    int model_count;
    nmt_engine_options engine;
    nmt_serve_options serve;
    int quiet;
} args;

static int parse_args(int argc, char **argv, args *a) {
    enum { HOST = 256, PORT, THREADS, N_BEST, ALPHA, RATIO, PRECISION, MAX_BATCH, WAIT, CHARS, QUEUE, TIMEOUT,
           BODY, KEYS, SRC, TGT, NO_SPLIT, MAX_INPUT, QUEUE_BYTES, HEADER_S, BODY_S, DRAIN, CONNS, CONNS_CLIENT };
    static const struct option options[] = {
        {"model", required_argument, NULL, 'm'},         {"host", required_argument, NULL, HOST},
        {"port", required_argument, NULL, PORT},         {"threads", required_argument, NULL, THREADS},
        {"beam-size", required_argument, NULL, 'k'},     {"n-best", required_argument, NULL, N_BEST},
        {"length-penalty", required_argument, NULL, ALPHA}, {"max-length-ratio", required_argument, NULL, RATIO},
        {"precision", required_argument, NULL, PRECISION}, {"max-batch", required_argument, NULL, MAX_BATCH},
        {"batch-wait-ms", required_argument, NULL, WAIT}, {"char-limit", required_argument, NULL, CHARS},
        {"max-queue", required_argument, NULL, QUEUE},   {"timeout-s", required_argument, NULL, TIMEOUT},
        {"max-body", required_argument, NULL, BODY},     {"api-keys", required_argument, NULL, KEYS},
        {"source-lang", required_argument, NULL, SRC},   {"target-lang", required_argument, NULL, TGT},
        {"no-sentence-split", no_argument, NULL, NO_SPLIT},
        {"max-input-length", required_argument, NULL, MAX_INPUT},
        {"max-queue-bytes", required_argument, NULL, QUEUE_BYTES}, {"header-timeout-s", required_argument, NULL, HEADER_S},
        {"body-timeout-s", required_argument, NULL, BODY_S}, {"drain-s", required_argument, NULL, DRAIN},
        {"max-connections", required_argument, NULL, CONNS},
        {"max-connections-per-client", required_argument, NULL, CONNS_CLIENT},
        {"quiet", no_argument, NULL, 'q'},               {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    a->engine = nmt_engine_options_default();
    a->engine.alignment = 1;
    a->serve = nmt_serve_options_default();
    long beam = a->engine.beam_size, n_best = 0, port = a->serve.port, threads = nmt_cli_threads_default(),
         batch = a->serve.max_batch;
    long body = (long)a->serve.max_body, queue_bytes = (long)a->serve.max_queue_bytes, conns = a->serve.max_connections,
         conns_client = a->serve.max_connections_per_client, max_input = 1000;
    nmt_precision precision = NMT_PRECISION_FP32;
    int precision_given = 0; /* without --precision a model runs as it was written (int8 stays int8) */
    optind = 1;
    int c;
    static const int repeatable[] = {'m', SRC, TGT, 0}; /* a model's languages follow its -m */
    while ((c = nmt_cli_getopt("serve", argc, argv, "m:k:qh", options, repeatable)) != -1) {
        int bad = 0;
        switch (c) {
        case 'm':
            if (a->model_count == NMT_SERVE_MAX_MODELS)
                return nmt_cli_usage_error("serve", "more than %d models", NMT_SERVE_MAX_MODELS), -1;
            a->models[a->model_count++].path = optarg;
            break;
        case HOST: a->serve.host = optarg; break;
        case PORT: bad = nmt_cli_long("serve", "--port", optarg, 0, 65535, &port); break;
        case THREADS: bad = nmt_cli_long("serve", "--threads", optarg, 1, 1024, &threads); break;
        case 'k': bad = nmt_cli_long("serve", "--beam-size", optarg, 1, 1000, &beam); break;
        case N_BEST: bad = nmt_cli_long("serve", "--n-best", optarg, 1, 1000, &n_best); break;
        case ALPHA: bad = nmt_cli_double("serve", "--length-penalty", optarg, 0, 10, &a->engine.length_penalty); break;
        case RATIO: bad = nmt_cli_double("serve", "--max-length-ratio", optarg, 0, 100, &a->engine.max_length_ratio); break;
        case PRECISION:
            bad = nmt_cli_precision("serve", optarg, &precision);
            precision_given = 1;
            break;
        case MAX_BATCH: bad = nmt_cli_long("serve", "--max-batch", optarg, 1, 4096, &batch); break;
        case WAIT: bad = nmt_cli_double("serve", "--batch-wait-ms", optarg, 0, 10000, &a->serve.batch_wait_ms); break;
        case CHARS: bad = nmt_cli_long("serve", "--char-limit", optarg, 0, 1L << 30, &a->serve.char_limit); break;
        case QUEUE: bad = nmt_cli_long("serve", "--max-queue", optarg, 0, 1L << 30, &a->serve.max_queue); break;
        case TIMEOUT: bad = nmt_cli_double("serve", "--timeout-s", optarg, 0, 86400, &a->serve.timeout_s); break;
        case BODY: bad = nmt_cli_long("serve", "--max-body", optarg, 1, 1L << 30, &body); break;
        case KEYS: a->serve.api_keys_path = optarg; break;
        case SRC:
        case TGT:
            if (!a->model_count)
                return nmt_cli_usage_error("serve", "%s comes after the -m of its model", c == SRC ? "--source-lang"
                                                                                                  : "--target-lang"), -1;
            const char **code = c == SRC ? &a->models[a->model_count - 1].source : &a->models[a->model_count - 1].target;
            if (*code)
                return nmt_cli_usage_error("serve", "%s given twice for %s", c == SRC ? "--source-lang" : "--target-lang",
                                           a->models[a->model_count - 1].path), -1;
            *code = optarg;
            break;
        case NO_SPLIT: a->serve.sentences = 0; break;
        case MAX_INPUT: bad = nmt_cli_long("serve", "--max-input-length", optarg, 1, 1L << 20, &max_input); break;
        case QUEUE_BYTES: bad = nmt_cli_long("serve", "--max-queue-bytes", optarg, 0, 1L << 40, &queue_bytes); break;
        case HEADER_S: bad = nmt_cli_double("serve", "--header-timeout-s", optarg, 0.01, 86400, &a->serve.header_timeout_s); break;
        case BODY_S: bad = nmt_cli_double("serve", "--body-timeout-s", optarg, 0.01, 86400, &a->serve.body_timeout_s); break;
        case DRAIN: bad = nmt_cli_double("serve", "--drain-s", optarg, 0, 86400, &a->serve.drain_s); break;
        case CONNS: bad = nmt_cli_long("serve", "--max-connections", optarg, 2, 65536, &conns); break;
        case CONNS_CLIENT: bad = nmt_cli_long("serve", "--max-connections-per-client", optarg, 1, 65535, &conns_client); break;
        case 'q': a->quiet = 1; break;
        case 'h': usage(stdout); return 1;
        default: return -1;
        }
        if (bad) return -1;
    }
    if (optind < argc) return nmt_cli_usage_error("serve", "unexpected argument '%s'", argv[optind]), -1;
    if (!a->model_count) return nmt_cli_usage_error("serve", "--model is required"), -1;
    if (conns_client >= conns)
        return nmt_cli_usage_error("serve", "--max-connections-per-client %ld must be less than --max-connections %ld",
                                   conns_client, conns), -1;
    if (n_best == 0) n_best = beam; /* every hypothesis the beam finds: alternatives on demand */
    if (n_best > beam) return nmt_cli_usage_error("serve", "--n-best %ld is more than the beam size %ld", n_best, beam), -1;
    a->engine.beam_size = (int)beam;
    a->engine.n_best = (int)n_best;
    a->engine.threads = (int)threads;
    /* Attention grows with the square of a line's length: bound it, and refuse (never crop) beyond. */
    a->engine.max_input_length = (int)max_input;
    a->engine.crop = 0;
    /* The engine splits each batch of lines into one batch per thread, decoded side by side with every
     * product whole, as `nmt translate` decodes a file. */
    long cores = threads ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    a->engine.max_batch = (int)((batch + cores - 1) / cores);
    a->engine.precision = precision_given ? nmt_packed_precision_name(precision) : NULL;
    a->serve.port = (int)port;
    a->serve.max_batch = (int)batch;
    a->serve.max_body = (size_t)body;
    a->serve.max_queue_bytes = (size_t)queue_bytes;
    a->serve.max_connections = (int)conns;
    a->serve.max_connections_per_client = (int)conns_client;
    a->serve.log = a->quiet ? NULL : stderr;
    return 0;
}

int nmt_cmd_serve(int argc, char **argv) {
    args a;
    memset(&a, 0, sizeof a);
    const int parsed = parse_args(argc, argv, &a);
    if (parsed != 0) return parsed > 0 ? NMT_EXIT_OK : NMT_EXIT_USAGE;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    nmt_serve_model models[NMT_SERVE_MAX_MODELS];
    char codes[NMT_SERVE_MAX_MODELS][2][NMT_LANGCODE_MAX];
    int opened = 0, rc = NMT_EXIT_OK;
    nmt_serve *server = NULL;
    for (; opened < a.model_count; opened++) {
        const model_arg *m = &a.models[opened];
        nmt_serve_model *model = &models[opened];
        *model = (nmt_serve_model){.name = m->path};
        if (a.model_count > 1) fprintf(stderr, "opening %s\n", m->path);
        if (nmt_engine_open(&model->engine, m->path, &a.engine) < 0) break;
        if (nmt_serve_model_langs(m->path, model->engine, m->source, m->target, codes[opened][0], codes[opened][1]) < 0) {
            nmt_engine_close(model->engine);
            break;
        }
        model->source = codes[opened][0][0] ? codes[opened][0] : NULL;
        model->target = codes[opened][1][0] ? codes[opened][1] : NULL;
    }
    if (opened < a.model_count || nmt_serve_start(&server, models, a.model_count, &a.serve) < 0) {
        rc = nmt_cli_fail("serve");
    } else {
        const char *host = a.serve.host;
        for (int m = 0; m < a.model_count; m++)
            fprintf(stderr, "serving %s-%s with %s\n", models[m].source, models[m].target, models[m].name);
        fprintf(stderr, strchr(host, ':') ? "listening on http://[%s]:%d\n" : "listening on http://%s:%d\n", host,
                nmt_serve_port(server));
        nmt_serve_run(server, &stop_requested);
        nmt_serve_free(server);
    }
    for (int m = 0; m < opened; m++) nmt_engine_close(models[m].engine);
    return rc;
}
