/* gen_en_hi_check: verifies a corpus written by nmt-gen-en-hi, with grammar rules of its own.
 *
 *   nmt-gen-en-hi-check [--coverage] DIR
 *
 * Reads DIR/{train,valid,test}.{en,hi,meta} and checks
 *   - the files: same line counts per split, strict UTF-8, Hindi in NFC and in Devanagari only,
 *     English in ASCII, no empty line or stray space, 3 to 12 English words;
 *   - the corpus: every English sentence occurs once across all splits (so the splits are
 *     disjoint and English → Hindi is a function), "I drink tea." → "मैं चाय पीता हूँ।" in test;
 *   - every pair, from its meta fields (the pieces of the Hindi sentence and their features):
 *     the Hindi is exactly its pieces in Hindi order (vocative, क्या, subject, time, place,
 *     beneficiary, recipient, object, wh-word, light word or predicate, नहीं, verb group), so the
 *     object precedes the verb and the verb group ends the sentence; a pronoun subject is the same
 *     pronoun on both sides and has the declared features; the verb group agrees with the
 *     right controller (the subject; in the ergative past the object, or masculine singular when
 *     the object is marked with को; in "have"/"like" the thing had or liked) in gender, number and
 *     person, in each tense; ने marks exactly the subjects of transitive pasts; को, से, के लिए,
 *     के पास and genitives in का/की/के mark what they should; every genitive and adjective agrees
 *     with its noun; negation is नहीं in Hindi iff "not" in English; questions are marked in both;
 *     English has the subject before the verb and the object after it, and the verb agrees.
 * These rules are written here from the grammar, not taken from the generator's code.
 *
 * Prints a table of how often each phenomenon occurs in train; with --coverage, a phenomenon that
 * never occurs is an error. Exit status 0 when everything holds, 1 otherwise (the first problems
 * are printed as FILE:LINE: message), 2 on a usage error.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <utf8proc.h>

#include "base/io.h"
#include "base/utf8.h"
#include "base/util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define MAX_FIELDS 32
#define MAX_TOKENS 48
#define MAX_REPORTS 30

/* ------------------------------------------------------------------------------------ reporting */

typedef struct checker {
    long problems;
    const char *file;    /* current file and line, for messages */
    long line;
    int in_train;
    long coverage[64];   /* counts per phenomenon, train only */
} checker;

static void problem(checker *c, const char *what, const char *detail) {
    if (++c->problems <= MAX_REPORTS) fprintf(stderr, "%s:%ld: %s%s%s\n", c->file, c->line, what, detail ? ": " : "", detail ? detail : "");
}

/* ------------------------------------------------------------------------------------- strings */

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Splits a copy of s at spaces; returns the number of tokens. */
static int split(const char *s, char *buf, size_t cap, char **tok) {
    int n = 0;
    snprintf(buf, cap, "%s", s);
    for (char *t = strtok(buf, " "); t && n < MAX_TOKENS; t = strtok(NULL, " ")) tok[n++] = t;
    return n;
}

static int has_token(const char *s, const char *word) {
    char buf[1024], *tok[MAX_TOKENS];
    int n = split(s, buf, sizeof buf, tok);
    for (int i = 0; i < n; i++)
        if (!strcmp(tok[i], word)) return 1;
    return 0;
}

/* The last space-separated word of s (s itself if it has none). */
static const char *last_word(const char *s) {
    const char *space = strrchr(s, ' ');
    return space ? space + 1 : s;
}

/* ----------------------------------------------------------------------------------------- meta */

typedef struct meta {
    char buf[2048];
    char *key[MAX_FIELDS], *val[MAX_FIELDS];
    int n;
} meta;

static int meta_parse(meta *m, const char *line) {
    m->n = 0;
    snprintf(m->buf, sizeof m->buf, "%s", line);
    for (char *f = strtok(m->buf, "\t"); f; f = strtok(NULL, "\t")) {
        char *eq = strchr(f, '=');
        if (!eq || m->n == MAX_FIELDS) return -1;
        *eq = '\0';
        m->key[m->n] = f;
        m->val[m->n++] = eq + 1;
    }
    return 0;
}

static const char *get(const meta *m, const char *key) {
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->key[i], key)) return m->val[i];
    return "";
}

static int is(const meta *m, const char *key, const char *value) { return !strcmp(get(m, key), value); }

/* Agreement features "person.number.gender", number one of sg pl tum ap hon. */
typedef struct feats {
    int person;
    char number[4];
    char g;
} feats;

static int feats_parse(const char *s, feats *f) {
    char g;
    if (sscanf(s, "%d.%3[a-z].%c", &f->person, f->number, &g) != 3) return -1;
    f->g = g;
    if (f->person < 1 || f->person > 3 || (g != 'm' && g != 'f')) return -1;
    if (strcmp(f->number, "sg") && strcmp(f->number, "pl") && strcmp(f->number, "tum") && strcmp(f->number, "ap") &&
        strcmp(f->number, "hon"))
        return -1;
    return 0;
}

static int plural_like(feats f) { return strcmp(f.number, "sg") != 0; }
static int third_singular(feats f) { return f.person == 3 && (!strcmp(f.number, "sg") || !strcmp(f.number, "hon")); }

/* ------------------------------------------------------------------------------ Hindi agreement */

/* Whether a word in -ā agrees: -ī feminine, -e masculine plural or oblique, -ā masculine singular
 * direct, written as a vowel sign (अच्छी) or, after a vowel, as a letter (नई, नए). */
static int aa_agrees(const char *w, char g, int plural_or_oblique) {
    if (g == 'f') return ends_with(w, "ी") || ends_with(w, "ई");
    if (plural_or_oblique) return ends_with(w, "े") || ends_with(w, "ए");
    return ends_with(w, "ा");
}

static const char *aux_present(feats f) {
    if (f.person == 1 && !strcmp(f.number, "sg")) return "हूँ";
    if (!strcmp(f.number, "tum")) return "हो";
    return strcmp(f.number, "sg") ? "हैं" : "है";
}

static const char *aux_past(feats f) {
    if (f.g == 'f') return plural_like(f) ? "थीं" : "थी";
    return plural_like(f) ? "थे" : "था";
}

/* The perfective ends in -ā/-yā, -ī/-ī (ई), -e/-e (ए), or -ī̃ for a feminine plural. */
static int perfective_agrees(const char *w, feats f) {
    if (f.g == 'f' && plural_like(f)) return ends_with(w, "ीं") || ends_with(w, "ईं");
    if (f.g == 'f') return ends_with(w, "ी") || ends_with(w, "ई");
    if (plural_like(f)) return ends_with(w, "े") || ends_with(w, "ए");
    return ends_with(w, "ा");
}

/* The future: -ū̃gā for मैं, -oge for तुम, -egā for a singular, -ẽge for the rest; -gī feminine. */
static int future_agrees(const char *w, feats f) {
    const char *end = f.g == 'f' ? "गी" : (plural_like(f) ? "गे" : "गा");
    if (!ends_with(w, end)) return 0;
    if (f.person == 1 && !strcmp(f.number, "sg")) return strstr(w, "ूँग") || strstr(w, "ऊँग");
    if (!strcmp(f.number, "tum")) return strstr(w, "ोग") || strstr(w, "ओग");
    if (!strcmp(f.number, "sg")) return (strstr(w, "ेग") || strstr(w, "एग")) && !strstr(w, "ेंग") && !strstr(w, "एँग");
    return strstr(w, "ेंग") || strstr(w, "एँग");
}

/* Checks the Hindi verb group v of a pair against its controller ctl. */
static void check_verb_group(checker *c, const meta *m, feats ctl) {
    char buf[512], *tok[MAX_TOKENS];
    const char *v = get(m, "v"), *tense = get(m, "tense");
    int n = split(v, buf, sizeof buf, tok), neg = is(m, "pol", "neg");
    if (!is(m, "frame", "act")) {
        const char *want = !strcmp(tense, "past") ? aux_past(ctl) : aux_present(ctl);
        if (n != 1 || strcmp(tok[0], want)) problem(c, "copula does not agree", v);
        return;
    }
    if (!strcmp(tense, "hab")) {
        /* पीता हूँ; with नहीं the auxiliary goes and a feminine plural nasalises: नहीं पीतीं */
        const char *end = ctl.g == 'f' ? (plural_like(ctl) && neg ? "तीं" : "ती") : plural_like(ctl) ? "ते" : "ता";
        if (n != (neg ? 1 : 2) || !ends_with(tok[0], end) || (!neg && strcmp(tok[1], aux_present(ctl))))
            problem(c, "habitual verb does not agree", v);
    } else if (!strcmp(tense, "prog")) {
        const char *raha = ctl.g == 'f' ? "रही" : plural_like(ctl) ? "रहे" : "रहा";
        if (n != 3 || strcmp(tok[1], raha) || strcmp(tok[2], aux_present(ctl))) problem(c, "progressive does not agree", v);
    } else if (!strcmp(tense, "past")) {
        if (n != 1 || !perfective_agrees(tok[0], ctl)) problem(c, "perfective does not agree", v);
    } else if (!strcmp(tense, "fut")) {
        if (n != 1 || !future_agrees(tok[0], ctl)) problem(c, "future does not agree", v);
    } else {
        problem(c, "unknown tense", tense);
    }
}

/* Pronouns fused with a postposition, which take the place of "X को", "X से". */
static const char *const dative_pronouns[] = {"मुझे", "तुम्हें", "आपको", "उसे", "हमें", "उन्हें"};
static const char *const se_pronouns[] = {"मुझसे", "तुमसे", "आपसे", "उससे", "हमसे", "उनसे"};
static const char *const ergative_pronouns[] = {"मैंने", "तुमने", "आपने", "उसने", "हमने", "उन्होंने"};

static int in_list(const char *w, const char *const *list, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(w, list[i])) return 1;
    return 0;
}

/* "X ने" or an ergative pronoun (गाने, खिलौने end in ने too, but are no ergatives). */
static int is_ergative(const char *phrase) {
    return ends_with(phrase, " ने") || in_list(phrase, ergative_pronouns, COUNT(ergative_pronouns));
}

/* "X को" or a dative pronoun. */
static int is_dative(const char *phrase) {
    return ends_with(phrase, " को") || in_list(phrase, dative_pronouns, COUNT(dative_pronouns));
}

/* "X के लिए", "X के पास": a noun with के, or a pronoun's genitive in -e (मेरे पास). */
static int is_compound(const char *phrase, const char *tail) {
    char want[64];
    snprintf(want, sizeof want, " %s", tail);
    if (!ends_with(phrase, want)) return 0;
    size_t head = strlen(phrase) - strlen(want);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)head, phrase);
    return ends_with(buf, " के") || ends_with(buf, "े");
}

/* Pronouns as subjects, in every case the frames use: direct, with ने, dative, with के पास. */
static const struct pronoun {
    const char *en;
    const char *hi[4];
    int person;
    const char *number;
    char g; /* 0: either */
} pronouns[] = {
    {"I", {"मैं", "मैंने", "मुझे", "मेरे पास"}, 1, "sg", 0},
    {"you", {"तुम", "तुमने", "तुम्हें", "तुम्हारे पास"}, 2, "tum", 0},
    {"you", {"आप", "आपने", "आपको", "आपके पास"}, 2, "ap", 0},
    {"he", {"वह", "उसने", "उसे", "उसके पास"}, 3, "sg", 'm'},
    {"she", {"वह", "उसने", "उसे", "उसके पास"}, 3, "sg", 'f'},
    {"we", {"हम", "हमने", "हमें", "हमारे पास"}, 1, "pl", 0},
    {"they", {"वे", "उन्होंने", "उन्हें", "उनके पास"}, 3, "pl", 0},
};

/* A pronoun subject, on either side, must be one row of the table on both sides and fit the
 * subject's features: "I"/मैं with 1.sg, "you"/आप with 2.ap, "she"/वह with a feminine 3.sg. */
static void check_pronoun_subject(checker *c, const char *hi_subject, const char *en_subject, feats sa) {
    int pronoun = 0;
    for (int i = 0; i < COUNT(pronouns); i++) {
        const struct pronoun *p = &pronouns[i];
        int hi_match = in_list(hi_subject, p->hi, 4), en_match = !strcmp(en_subject, p->en);
        pronoun |= hi_match || en_match;
        if (hi_match && en_match && p->person == sa.person && !strcmp(p->number, sa.number) && (!p->g || p->g == sa.g))
            return;
    }
    if (pronoun) problem(c, "pronoun subject does not match its features", hi_subject);
}

/* The list "word:g.number.case,..." of genitives and adjectives with their head's features. */
static void check_agreement_list(checker *c, const char *list) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *item = strtok(buf, ","); item; item = strtok(NULL, ",")) {
        char *colon = strrchr(item, ':');
        char g, number[4], kase;
        if (!colon || sscanf(colon + 1, "%c.%3[a-z].%c", &g, number, &kase) != 3) {
            problem(c, "bad agreement entry", item);
            continue;
        }
        *colon = '\0';
        if (!aa_agrees(item, g, strcmp(number, "sg") || kase == 'o')) problem(c, "modifier does not agree", item);
    }
}

/* ---------------------------------------------------------------------------------- one pair */

enum {
    COV_ACT, COV_ADJ, COV_LOC, COV_HAVE, COV_LIKE,
    COV_HAB, COV_PROG, COV_PAST, COV_FUT, COV_NEG, COV_YN, COV_WH,
    COV_I, COV_TUM, COV_AP, COV_HE, COV_SHE, COV_WE, COV_THEY, COV_HON, COV_VOC_F,
    COV_ERG_OBJ_F, COV_ERG_OBJ_PL, COV_ERG_KO, COV_ERG_LIGHT, COV_PAST_NO_ERG, COV_PAST_OBJ_NO_ERG,
    COV_FPL_NASAL, COV_NEG_HAB, COV_KO, COV_SE, COV_GEN, COV_KE_LIYE, COV_KE_PAAS, COV_MEIN, COV_PAR,
    COV_NEECHE, COV_PEECHE, COV_SAAMNE, COV_APNA, COV_OBL_PL, COV_ADJ_VAR, COV_ADJ_INV,
    COV_COUNT
};

static const char *const coverage_names[COV_COUNT] = {
    "frame: action", "frame: X is ADJ", "frame: X is PLACE", "frame: X has Y (के पास)", "frame: X likes Y (dative)",
    "present habitual", "present progressive", "simple past", "future", "negation (नहीं)", "yes/no question (क्या)",
    "wh-question (क्या/कहाँ)",
    "subject I (मैं)", "subject you (तुम)", "subject you, honorific (आप)", "subject he", "subject she", "subject we",
    "subject they", "honorific noun (पिताजी)", "vocative gives तुम a feminine",
    "ergative ने, verb agrees with feminine object", "ergative ने, verb agrees with plural object",
    "ergative ने, object with को, verb masculine singular", "ergative ने, verb agrees with light noun (बात की)",
    "past without ने (intransitive)", "past with an object but no ने (लाना, मिलना)",
    "feminine plural nasal (-ीं)", "negated habitual drops the auxiliary", "को", "से", "genitive का/की/के",
    "के लिए", "के पास", "में", "पर", "के नीचे", "के पीछे", "के सामने", "reflexive अपना", "oblique plural (-ों)",
    "variable adjective (अच्छा/अच्छी/अच्छे)", "invariant adjective (सुंदर)",
};

static void cover(checker *c, int what) {
    if (c->in_train) c->coverage[what]++;
}

/* English: "[Voc,] [Wh] [Aux] subject verb ... object ..." with do-support and agreement. */
static void check_english(checker *c, const meta *m, feats sa, const char *en) {
    char buf[1024], *tok[MAX_TOKENS];
    int n = split(en, buf, sizeof buf, tok), i = 0;
    if (n > 0) tok[n - 1][strlen(tok[n - 1]) - 1] = '\0'; /* the final . or ? */
    const char *se = get(m, "se"), *eb = get(m, "eb"), *tense = get(m, "tense");
    int third = third_singular(sa), neg = is(m, "pol", "neg");
    int copula = is(m, "frame", "adj") || is(m, "frame", "loc");
    int past = !strcmp(tense, "past");
    const char *be = sa.person == 1 && !strcmp(sa.number, "sg") ? (past ? "was" : "am") : third ? (past ? "was" : "is")
                                                                                           : (past ? "were" : "are");
    if (*get(m, "voc")) i++;
    if (is(m, "mood", "wh")) {
        if (i >= n || (strcasecmp(tok[i], "what") && strcasecmp(tok[i], "where"))) problem(c, "English wh-question without what/where", en);
        i++;
    }
    /* the word that carries tense and agreement, before the subject in a question */
    const char *want;
    if (copula || !strcmp(tense, "prog")) want = be;
    else if (!strcmp(tense, "fut")) want = "will";
    else if (past) want = "did";
    else want = third ? "does" : "do";
    if (!is(m, "mood", "st")) {
        if (i >= n || strcasecmp(tok[i], want)) problem(c, "English question has the wrong auxiliary", en);
        i++;
    }
    /* the subject */
    char sbuf[256], *stok[MAX_TOKENS];
    int sn = split(se, sbuf, sizeof sbuf, stok);
    for (int k = 0; k < sn; k++, i++)
        if (i >= n || strcasecmp(tok[i], stok[k])) {
            problem(c, "English subject is not where it belongs", en);
            return;
        }
    if (!is(m, "mood", "st")) return;
    if (i >= n) {
        problem(c, "English sentence ends after its subject", en);
        return;
    }
    /* statements: the verb (group) follows the subject and agrees */
    const char *w = tok[i];
    int ok;
    if (copula || !strcmp(tense, "prog")) ok = !strcmp(w, be);
    else if (!strcmp(tense, "fut")) ok = !strcmp(w, "will");
    else if (neg) ok = !strcmp(w, past ? "did" : third ? "does" : "do");
    else if (past) ok = strcmp(w, "do") && strcmp(w, "does") && strcmp(w, "did");
    else ok = third ? (strcmp(w, eb) && w[strlen(w) - 1] == 's') : !strcmp(w, eb);
    if (!ok) problem(c, "English verb does not agree with its subject", en);
    /* the object follows the verb (SVO); tokens sit at the same offsets in buf as in en */
    const char *eo = get(m, "eo");
    if (*eo && !strstr(en + (w - buf), eo)) problem(c, "English object does not follow the verb", en);
}

static void check_pair(checker *c, const char *en, const char *hi, const char *meta_line) {
    meta m;
    feats sa, ctl;
    if (meta_parse(&m, meta_line) || feats_parse(get(&m, "sa"), &sa)) {
        problem(c, "unreadable meta line", meta_line);
        return;
    }
    const char *frame = get(&m, "frame"), *tense = get(&m, "tense"), *mood = get(&m, "mood");
    const char *s = get(&m, "s"), *o = get(&m, "o"), *oc = get(&m, "oc"), *lg = get(&m, "lg");
    int neg = is(&m, "pol", "neg"), act = !strcmp(frame, "act");
    int erg = act && !strcmp(tense, "past") && is(&m, "erg", "1");

    /* 1. the Hindi is its pieces in Hindi order */
    char want[1024] = "";
    const char *keys[] = {"voc", "?", "s", "t", "pl", "b", "r", "o", "wh", "lw", "-", "v"};
    for (int i = 0; i < COUNT(keys); i++) {
        const char *piece = !strcmp(keys[i], "?") ? (!strcmp(mood, "yn") ? "क्या" : "")
                          : !strcmp(keys[i], "-") ? (neg ? "नहीं" : "")
                          : get(&m, keys[i]);
        if (!*piece) continue;
        if (*want) strncat(want, " ", sizeof want - strlen(want) - 1);
        strncat(want, piece, sizeof want - strlen(want) - 1);
    }
    strncat(want, !strcmp(mood, "st") ? "।" : "?", sizeof want - strlen(want) - 1);
    if (strcmp(want, hi)) problem(c, "Hindi is not subject-(object)-verb in order", hi);
    if (!*s || !*get(&m, "v")) problem(c, "Hindi lacks a subject or verb", hi);

    /* 2. the controller of agreement, and the verb group. In the ergative past: a light noun (बात
     * की), else an unmarked object, else (no object, or one with को or से) masculine singular. */
    if (act && erg) {
        feats_parse("3.sg.m", &ctl);
        if (*lg) ctl.g = lg[0];
        else if (!strcmp(oc, "dir") && feats_parse(get(&m, "oa"), &ctl)) problem(c, "bad object features", meta_line);
    } else if (!strcmp(frame, "have") || !strcmp(frame, "like")) {
        if (feats_parse(get(&m, "oa"), &ctl)) problem(c, "bad object features", meta_line);
    } else {
        ctl = sa;
    }
    check_verb_group(c, &m, ctl);

    /* 3. a pronoun subject is the person the features say, on both sides; ने on the subject exactly
     * in the transitive past; the cases of other subjects */
    check_pronoun_subject(c, s, get(&m, "se"), sa);
    if (erg != is_ergative(s)) problem(c, erg ? "transitive past without ने" : "ने where it does not belong", hi);
    if (!strcmp(frame, "have") && !is_compound(s, "पास")) problem(c, "possessor without के पास", hi);
    if (!strcmp(frame, "like") && !is_dative(s)) problem(c, "liker not in the dative", hi);

    /* 4. postpositions of objects and adjuncts */
    if (!strcmp(oc, "ko") && !is_dative(o)) problem(c, "animate object without को", hi);
    if (!strcmp(oc, "se") && !ends_with(o, " से") && !in_list(o, se_pronouns, COUNT(se_pronouns))) problem(c, "object without से", hi);
    if (!strcmp(oc, "gen") && !aa_agrees(last_word(o), lg[0], 0)) problem(c, "genitive object does not agree with the light noun", hi);
    if (!strcmp(oc, "dir") && (ends_with(o, " को") || ends_with(o, " से"))) problem(c, "direct object with a postposition", hi);
    if (*get(&m, "r") && !is_dative(get(&m, "r"))) problem(c, "recipient without को", hi);
    if (*get(&m, "b") && !is_compound(get(&m, "b"), "लिए")) problem(c, "beneficiary without के लिए", hi);

    /* 5. genitives and adjectives agree with their nouns; a predicate adjective with the subject */
    check_agreement_list(c, get(&m, "agr"));
    if (is(&m, "av", "1") && !aa_agrees(get(&m, "adj"), sa.g, plural_like(sa))) problem(c, "predicate adjective does not agree", hi);

    /* 6. negation and questions, on both sides */
    if (neg != has_token(hi, "नहीं") || neg != has_token(en, "not")) problem(c, "negation differs between the sides", en);
    if (strcmp(mood, "st") && !ends_with(en, "?")) problem(c, "question without ? in English", en);
    if (!strcmp(mood, "st") && !ends_with(en, ".")) problem(c, "statement without . in English", en);
    if (!strcmp(mood, "wh") && strcmp(get(&m, "wh"), "क्या") && strcmp(get(&m, "wh"), "कहाँ")) problem(c, "wh-question without क्या/कहाँ", hi);

    /* 7. English */
    check_english(c, &m, sa, en);

    /* coverage */
    static const char *const frames[] = {"act", "adj", "loc", "have", "like"};
    static const char *const tenses[] = {"hab", "prog", "past", "fut"};
    for (int i = 0; i < COUNT(frames); i++)
        if (!strcmp(frame, frames[i])) cover(c, COV_ACT + i);
    for (int i = 0; i < COUNT(tenses); i++)
        if (act && !strcmp(tense, tenses[i])) cover(c, COV_HAB + i);
    if (neg) cover(c, COV_NEG);
    if (!strcmp(mood, "yn")) cover(c, COV_YN);
    if (!strcmp(mood, "wh")) cover(c, COV_WH);
    struct { const char *word; int what; } pronouns[] = {
        {"मैं", COV_I}, {"मैंने", COV_I}, {"तुम", COV_TUM}, {"तुमने", COV_TUM}, {"आप", COV_AP}, {"आपने", COV_AP},
        {"हम", COV_WE}, {"हमने", COV_WE}, {"वे", COV_THEY}, {"उन्होंने", COV_THEY},
    };
    for (int i = 0; i < COUNT(pronouns); i++)
        if (!strcmp(s, pronouns[i].word)) cover(c, pronouns[i].what);
    if ((!strcmp(s, "वह") || !strcmp(s, "उसने")) && sa.person == 3) cover(c, sa.g == 'f' ? COV_SHE : COV_HE);
    if (!strcmp(sa.number, "hon")) cover(c, COV_HON);
    if (!strcmp(sa.number, "tum") && sa.g == 'f' && *get(&m, "voc")) cover(c, COV_VOC_F);
    if (erg && !*lg && !strcmp(oc, "dir") && ctl.g == 'f') cover(c, COV_ERG_OBJ_F);
    if (erg && !*lg && !strcmp(oc, "dir") && plural_like(ctl)) cover(c, COV_ERG_OBJ_PL);
    if (erg && !strcmp(oc, "ko")) cover(c, COV_ERG_KO);
    if (erg && *lg) cover(c, COV_ERG_LIGHT);
    if (act && !strcmp(tense, "past") && !erg) cover(c, *o ? COV_PAST_OBJ_NO_ERG : COV_PAST_NO_ERG);
    if (ends_with(last_word(get(&m, "v")), "ीं") || ends_with(last_word(get(&m, "v")), "ईं")) cover(c, COV_FPL_NASAL);
    if (act && neg && !strcmp(tense, "hab")) cover(c, COV_NEG_HAB);
    if (!strcmp(oc, "ko") || *get(&m, "r")) cover(c, COV_KO);
    if (!strcmp(oc, "se")) cover(c, COV_SE);
    if (strstr(get(&m, "agr"), "का:") || strstr(get(&m, "agr"), "की:") || strstr(get(&m, "agr"), "के:")) cover(c, COV_GEN);
    if (*get(&m, "b")) cover(c, COV_KE_LIYE);
    if (ends_with(s, "पास")) cover(c, COV_KE_PAAS);
    const char *pl = get(&m, "pl");
    if (ends_with(pl, "में")) cover(c, COV_MEIN);
    if (ends_with(pl, "पर")) cover(c, COV_PAR);
    if (ends_with(pl, "नीचे")) cover(c, COV_NEECHE);
    if (ends_with(pl, "पीछे")) cover(c, COV_PEECHE);
    if (ends_with(pl, "सामने")) cover(c, COV_SAAMNE);
    if (strstr(hi, "अपन")) cover(c, COV_APNA);
    if (strstr(hi, "ों ")) cover(c, COV_OBL_PL);
    if (*get(&m, "adj")) cover(c, is(&m, "av", "1") ? COV_ADJ_VAR : COV_ADJ_INV);
}

/* ------------------------------------------------------------------------------------ the files */

/* Every character of a Hindi line is Devanagari, a space, or one of , ? । */
static int devanagari_only(const char *s, size_t len) {
    size_t pos = 0;
    while (pos < len) {
        uint32_t cp = nmt_utf8_next(s, &pos);
        if (!(cp >= 0x0900 && cp <= 0x097F) && cp != ' ' && cp != ',' && cp != '?') return 0;
    }
    return 1;
}

static int ascii_only(const char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7E) return 0;
    return 1;
}

static int spacing_ok(const char *s, size_t len) {
    return len > 0 && s[0] != ' ' && s[len - 1] != ' ' && !strstr(s, "  ");
}

static int is_nfc(const char *s) {
    utf8proc_uint8_t *nfc = utf8proc_NFC((const utf8proc_uint8_t *)s);
    int same = nfc && !strcmp((const char *)nfc, s);
    free(nfc);
    return same;
}

static int word_count(const char *s) {
    int n = 0;
    for (const char *c = s; *c; c++)
        if (*c != ' ' && (c == s || c[-1] == ' ')) n++;
    return n;
}

/* English sentences seen so far, for uniqueness across splits: an open-addressing set of
 * "file:line<TAB>sentence" strings, kept under half full. */
typedef struct seen {
    char **text;
    size_t nslots, count;
} seen;

static uint64_t hash_sentence(const char *entry) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *s = strchr(entry, '\t') + 1; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t seen_slot(const seen *t, const char *entry) {
    size_t mask = t->nslots - 1, i = hash_sentence(entry) & mask;
    while (t->text[i] && strcmp(strchr(t->text[i], '\t'), strchr(entry, '\t'))) i = (i + 1) & mask;
    return i;
}

static int seen_grow(seen *t) {
    seen bigger = {nmt_calloc(t->nslots * 2, sizeof *t->text), t->nslots * 2, t->count};
    if (!bigger.text) return -1;
    for (size_t i = 0; i < t->nslots; i++)
        if (t->text[i]) bigger.text[seen_slot(&bigger, t->text[i])] = t->text[i];
    free(t->text);
    *t = bigger;
    return 0;
}

/* Records en as seen at `where`. Returns the earlier entry if en was seen before, else NULL
 * (also when memory runs out: the error is set and *failed raised). */
static const char *seen_add(seen *t, const char *en, const char *where, int *failed) {
    size_t n = strlen(where) + strlen(en) + 2;
    char *entry = nmt_malloc(n);
    if (!entry || (2 * (t->count + 1) > t->nslots && seen_grow(t))) {
        free(entry);
        *failed = 1;
        return NULL;
    }
    snprintf(entry, n, "%s\t%s", where, en);
    size_t i = seen_slot(t, entry);
    if (t->text[i]) {
        free(entry);
        return t->text[i];
    }
    t->text[i] = entry;
    t->count++;
    return NULL;
}

static char *read_lines(const char *dir, const char *name, char ***lines, long *count) {
    char *path = nmt_path_join(dir, name), *data = NULL;
    size_t size;
    *lines = NULL;
    *count = 0;
    if (!path || nmt_read_file(path, &data, &size)) {
        free(path);
        return NULL;
    }
    long n = 0;
    for (size_t i = 0; i < size; i++) n += data[i] == '\n';
    *lines = nmt_calloc((size_t)n + 1, sizeof **lines);
    if (!*lines) {
        free(data);
        free(path);
        return NULL;
    }
    char *line = data;
    for (long i = 0; i < n; i++) {
        char *nl = strchr(line, '\n');
        *nl = '\0';
        (*lines)[i] = line;
        line = nl + 1;
    }
    *count = n;
    free(path);
    return data;
}

static int check_split(checker *c, const char *dir, const char *split_name, seen *t, int *found_tea) {
    static const char *sides[] = {"en", "hi", "meta"};
    char *data[3], **lines[3], files[3][64];
    long count[3];
    int rc = 0;
    for (int s = 0; s < 3; s++) {
        snprintf(files[s], sizeof files[s], "%s.%s", split_name, sides[s]);
        data[s] = rc == 0 ? read_lines(dir, files[s], &lines[s], &count[s]) : NULL;
        if (!data[s]) {
            lines[s] = NULL;
            rc = -1;
        }
    }
    if (rc == 0 && (count[0] != count[1] || count[0] != count[2])) {
        fprintf(stderr, "%s: line counts differ: %s %ld, %s %ld, %s %ld\n", dir, files[0], count[0], files[1], count[1],
                files[2], count[2]);
        c->problems++;
    }
    c->in_train = !strcmp(split_name, "train");
    for (long i = 0; rc == 0 && i < count[0] && i < count[1] && i < count[2]; i++) {
        const char *en = lines[0][i], *hi = lines[1][i];
        size_t en_len = strlen(en), hi_len = strlen(hi);
        c->line = i + 1;
        c->file = files[0];
        if (nmt_utf8_invalid_at(en, en_len) >= 0 || !ascii_only(en)) problem(c, "English is not plain ASCII", NULL);
        if (!spacing_ok(en, en_len) || word_count(en) < 3 || word_count(en) > 12) problem(c, "English empty, badly spaced, or not 3-12 words", en);
        if (!(en[0] >= 'A' && en[0] <= 'Z')) problem(c, "English does not start with a capital", en);
        char where[96];
        snprintf(where, sizeof where, "%s:%ld", files[0], i + 1);
        int failed = 0;
        const char *earlier = seen_add(t, en, where, &failed);
        if (failed) rc = -1;
        if (earlier) problem(c, "English sentence occurs twice (splits must be disjoint)", earlier);
        c->file = files[1];
        if (nmt_utf8_invalid_at(hi, hi_len) >= 0) {
            problem(c, "invalid UTF-8", NULL);
            continue;
        }
        if (!spacing_ok(hi, hi_len) || !devanagari_only(hi, hi_len)) problem(c, "Hindi empty, badly spaced, or not Devanagari", hi);
        if (!is_nfc(hi)) problem(c, "Hindi is not in NFC", hi);
        if (!strcmp(en, "I drink tea.")) {
            if (strcmp(split_name, "test") || strcmp(hi, "मैं चाय पीता हूँ।")) problem(c, "\"I drink tea.\" is not in test as मैं चाय पीता हूँ।", hi);
            else *found_tea = 1;
        }
        c->file = files[2];
        check_pair(c, en, hi, lines[2][i]);
    }
    for (int s = 0; s < 3; s++) {
        free(lines[s]);
        free(data[s]);
    }
    return rc;
}

static const char usage[] =
    "Usage: nmt-gen-en-hi-check [--coverage] DIR\n"
    "Verifies DIR/{train,valid,test}.{en,hi,meta} as written by nmt-gen-en-hi.\n"
    "  --coverage  also fail when a phenomenon never occurs in train\n";

int main(int argc, char **argv) {
    static const struct option options[] = {{"coverage", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int want_coverage = 0, opt;
    while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
        if (opt == 'c') want_coverage = 1;
        else if (opt == 'h') {
            fputs(usage, stdout);
            return 0;
        } else {
            fputs("Try 'nmt-gen-en-hi-check --help'.\n", stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "nmt-gen-en-hi-check: expected one directory\nTry 'nmt-gen-en-hi-check --help'.\n");
        return 2;
    }
    const char *dir = argv[optind];
    checker c;
    memset(&c, 0, sizeof c);
    seen t = {NULL, 1024, 0};
    t.text = nmt_calloc(t.nslots, sizeof *t.text);
    int found_tea = 0, rc = t.text ? 0 : -1;
    const char *splits[] = {"test", "valid", "train"};
    for (int i = 0; rc == 0 && i < COUNT(splits); i++) rc = check_split(&c, dir, splits[i], &t, &found_tea);
    if (rc) {
        fprintf(stderr, "nmt-gen-en-hi-check: %s\n", nmt_error());
        c.problems++;
    } else if (!found_tea) {
        fprintf(stderr, "%s: \"I drink tea.\" → \"मैं चाय पीता हूँ।\" is missing from test\n", dir);
        c.problems++;
    }
    if (rc == 0) printf("phenomenon\tpairs in train\n");
    for (int i = 0; rc == 0 && i < COV_COUNT; i++) {
        printf("%s\t%ld\n", coverage_names[i], c.coverage[i]);
        if (want_coverage && c.coverage[i] == 0) {
            fprintf(stderr, "%s: no pair in train shows: %s\n", dir, coverage_names[i]);
            c.problems++;
        }
    }
    for (size_t i = 0; t.text && i < t.nslots; i++) free(t.text[i]);
    free(t.text);
    if (c.problems) {
        fprintf(stderr, "nmt-gen-en-hi-check: %ld problem%s in %s\n", c.problems, c.problems == 1 ? "" : "s", dir);
        return 1;
    }
    fprintf(stderr, "nmt-gen-en-hi-check: %s is well-formed\n", dir);
    return 0;
}
