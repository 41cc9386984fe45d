/* gen_en_hi: the quickstart's demo English→Hindi corpus, generated from our own grammar and lexicon.
 *
 *   nmt-gen-en-hi --output DIR [--seed N] [--pairs N] [--valid N] [--test N]
 *
 * Writes DIR/{train,valid,test}.{en,hi,meta}: UTF-8, one sentence a line, line i of X.hi the
 * translation of line i of X.en, and line i of X.meta the pair's grammatical features as
 * tab-separated key=value fields (listed in corpora/en-hi/README.md), from which
 * nmt-gen-en-hi-check verifies word order and agreement with rules of its own.
 *
 * The grammar: five frames (an action, "X is ADJ", "X is PLACE", "X has Y", "X likes Y") in the
 * present habitual, present progressive, simple past and future, affirmative, negated, and as yes/no
 * and wh-questions, over the words of en_hi_lexicon.h. A sentence is chosen as a structure (subject,
 * verb, object, ...) and rendered twice: English (SVO, articles, do-support, -s) and Hindi (SOV,
 * postpositions after oblique nouns, agreement of verbs, adjectives and genitives, ergative ने).
 *
 * English determines Hindi: where English leaves a feature open, a fixed convention fills it (I, we,
 * they and a plain "you" are masculine; "you" is तुम unless a vocative "Sir,"/"Madam," makes it आप;
 * a vocative name gives तुम its gender). Every English sentence appears once in the corpus; drawing
 * the same English with a different Hindi stops the program with an error (a grammar bug).
 *
 * Determinism: the output depends on the seed and the sizes only (splitmix64, insertion order).
 * "I drink tea." → "मैं चाय पीता हूँ।" is the first line of the test split and appears nowhere else.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/io.h"
#include "base/util.h"

#include "en_hi_lexicon.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------------------------------ randomness */

typedef struct rng {
    uint64_t state;
} rng;

/* splitmix64 (Steele, Lea and Flood, 2014): the same stream on every platform. */
static uint64_t rng_next(rng *r) {
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int pick(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static int chance(rng *r, int percent) { return pick(r, 100) < percent; }

/* ------------------------------------------------------------------------------------------ text */

#define TEXT_MAX 512

/* A bounded string. Nothing the grammar makes comes near the bound; a sentence that overflowed
 * anyway is thrown away, never written. */
typedef struct text {
    char s[TEXT_MAX];
    size_t n;
    int overflow;
} text;

static void text_clear(text *t) {
    t->s[0] = '\0';
    t->n = 0;
    t->overflow = 0;
}

static void text_raw(text *t, const char *s) {
    size_t len = strlen(s);
    if (t->n + len >= TEXT_MAX) {
        t->overflow = 1;
        return;
    }
    memcpy(t->s + t->n, s, len + 1);
    t->n += len;
}

/* Appends a word or phrase, a space apart from what is already there; NULL or "" adds nothing. */
static void text_add(text *t, const char *s) {
    if (!s || !*s) return;
    if (t->n) text_raw(t, " ");
    text_raw(t, s);
}

static void text_set(text *t, const char *s) {
    text_clear(t);
    text_raw(t, s);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* out = word without its final `suffix` (which it must end with), followed by `add`. */
static void replace_end(text *out, const char *word, const char *suffix, const char *add) {
    size_t keep = strlen(word) - strlen(suffix);
    text_clear(out);
    if (keep >= TEXT_MAX) {
        out->overflow = 1;
        return;
    }
    memcpy(out->s, word, keep);
    out->s[keep] = '\0';
    out->n = keep;
    text_raw(out, add);
}

/* ------------------------------------------------------------------------------- Hindi morphology */

typedef struct agr {
    int person; /* 1, 2, 3 */
    int number; /* NUM_* */
    char g;     /* 'm', 'f' */
} agr;

static int agr_plural(agr a) { return a.number != NUM_SG; }
static int en_third_singular(agr a) { return a.person == 3 && (a.number == NUM_SG || a.number == NUM_HON); }

static const char *number_name(int number) {
    static const char *names[] = {"sg", "pl", "tum", "ap", "hon"};
    return names[number];
}

/* A word in -ā agreeing like an adjective: -ī with a feminine head, -e with a masculine head that is
 * plural, honorific or oblique, else unchanged (अच्छा/अच्छी/अच्छे, मेरा/मेरी/मेरे, का/की/के). */
static void hi_aa(text *out, const char *lemma, char g, int plural_or_oblique) {
    replace_end(out, lemma, "ा", g == 'f' ? "ी" : plural_or_oblique ? "े" : "ा");
}

/* The four cases of a noun: direct/oblique × singular/plural (लड़का लड़के लड़के लड़कों). */
static void hi_noun(text *out, const en_hi_noun *n, int plural, int oblique) {
    const char *w = n->hi;
    if (n->forms[0]) {
        text_set(out, n->forms[2 * plural + oblique]);
    } else if (n->g == 'm' && ends_with(w, "ा")) {
        if (!plural && !oblique) text_set(out, w);
        else replace_end(out, w, "ा", plural && oblique ? "ों" : "े");
    } else if (n->g == 'm') {
        if (!(plural && oblique)) text_set(out, w);
        else if (ends_with(w, "ी")) replace_end(out, w, "ी", "ियों");
        else if (ends_with(w, "ई")) replace_end(out, w, "ई", "इयों");
        else if (ends_with(w, "ू")) replace_end(out, w, "ू", "ुओं");
        else replace_end(out, w, "", "ों");
    } else if (!plural) {
        text_set(out, w);
    } else if (ends_with(w, "िया")) {
        replace_end(out, w, oblique ? "ा" : "", oblique ? "ों" : "ँ");
    } else if (ends_with(w, "ी")) {
        replace_end(out, w, "ी", oblique ? "ियों" : "ियाँ");
    } else if (ends_with(w, "ई")) {
        replace_end(out, w, "ई", oblique ? "इयों" : "इयाँ");
    } else if (ends_with(w, "ा")) {
        replace_end(out, w, "", oblique ? "ओं" : "एँ");
    } else {
        replace_end(out, w, "", oblique ? "ों" : "ें");
    }
}

static void hi_adj(text *out, const en_hi_adj *a, int animate, char g, int plural_or_oblique) {
    if (a->forms[0]) {
        text_set(out, a->forms[g == 'f' ? 2 : plural_or_oblique ? 1 : 0]);
        return;
    }
    const char *lemma = animate && a->hi_animate ? a->hi_animate : a->hi;
    if (a->variable) hi_aa(out, lemma, g, plural_or_oblique);
    else text_set(out, lemma);
}

/* Stems in -ā or -o take -yā in the perfective and -ū̃gā in the future (खाया, खाऊँगा), others -ā, -ūgā
 * straight after the consonant (पढ़ा, पढ़ूँगा). */
static int stem_ends_in_vowel(const char *stem) {
    return ends_with(stem, "ा") || ends_with(stem, "ो") || strcmp(stem, "आ") == 0;
}

/* Perfective participle agreeing with (g, plural): पिया पी पिए पीं, गया, पढ़ीं. */
static void hi_perfective(text *out, const en_hi_verb *v, char g, int plural) {
    static const char *after_vowel[4] = {"या", "ई", "ए", "ईं"};
    static const char *after_consonant[4] = {"ा", "ी", "े", "ीं"};
    int k = (g == 'f') + 2 * plural;
    if (v->pfv[0]) text_set(out, v->pfv[k]);
    else replace_end(out, v->hi, "", stem_ends_in_vowel(v->hi) ? after_vowel[k] : after_consonant[k]);
}

/* Future of subject a: पिऊँगा, पियोगी, पिएगा, पिएँगे. */
static void hi_future(text *out, const en_hi_verb *v, agr a) {
    static const char *after_vowel[4] = {"ऊँगा", "ओगे", "एगा", "एँगे"};
    static const char *after_consonant[4] = {"ूँगा", "ोगे", "ेगा", "ेंगे"};
    int slot = a.person == 1 && a.number == NUM_SG ? 0 : a.number == NUM_TUM ? 1 : a.number == NUM_SG ? 2 : 3;
    text masculine;
    if (v->fut[0]) text_set(&masculine, v->fut[slot]);
    else replace_end(&masculine, v->hi, "", stem_ends_in_vowel(v->hi) ? after_vowel[slot] : after_consonant[slot]);
    if (a.g == 'f') replace_end(out, masculine.s, ends_with(masculine.s, "ा") ? "ा" : "े", "ी");
    else *out = masculine;
}

/* Habitual participle: पीता पीती पीते, and पीतीं for a feminine plural with no auxiliary after it. */
static void hi_habitual(text *out, const char *stem, agr a, int aux_follows) {
    const char *end = a.g == 'f' ? (agr_plural(a) && !aux_follows ? "तीं" : "ती") : agr_plural(a) ? "ते" : "ता";
    replace_end(out, stem, "", end);
}

static const char *hi_aux_present(agr a) {
    if (a.person == 1 && a.number == NUM_SG) return "हूँ";
    if (a.number == NUM_TUM) return "हो";
    return a.number == NUM_SG ? "है" : "हैं";
}

static void hi_aux_past(text *out, agr a) {
    if (a.g == 'f' && agr_plural(a)) text_set(out, "थीं");
    else hi_aa(out, "था", a.g, agr_plural(a));
}

static void hi_aux(text *out, agr a, int past) {
    if (past) hi_aux_past(out, a);
    else text_set(out, hi_aux_present(a));
}

/* ----------------------------------------------------------------------------------- noun phrases */

enum { NP_PRON, NP_NAME, NP_NOUN };
enum { DET_NONE, DET_THE, DET_A, DET_NUM, DET_POSS };

/* "my", "Ram's", "the boys'" */
typedef struct possessor {
    int kind; /* NP_* */
    int pron;
    const en_hi_name *name;
    const en_hi_noun *noun;
    int plural;
} possessor;

typedef struct np {
    int kind; /* NP_* */
    int pron;
    const en_hi_name *name;
    const en_hi_noun *noun;
    const en_hi_adj *adj; /* attributive adjective, or NULL */
    int det;              /* DET_* (nouns) */
    int plural;
    const en_hi_number *numeral;
    possessor poss;
    int reflexive; /* the possessor is the subject: अपना */
    int drop_ek;   /* Hindi leaves out एक (in a negated or questioned sentence) */
    agr a;
} np;

static int np_human(const np *p) { return p->kind != NP_NOUN || (p->noun->sem & S_HUM); }
static int np_animate(const np *p) { return p->kind != NP_NOUN || (p->noun->sem & (S_HUM | S_ANI)); }

static agr noun_agr(const en_hi_noun *n, int plural) {
    agr a = {3, (n->flags & N_HON) ? NUM_HON : plural ? NUM_PL : NUM_SG, n->g};
    return a;
}

static void np_set_pron(np *p, int pron) {
    memset(p, 0, sizeof *p);
    p->kind = NP_PRON;
    p->pron = pron;
    agr a = {en_hi_pronouns[pron].person, en_hi_pronouns[pron].number, en_hi_pronouns[pron].g};
    p->a = a;
}

static void np_set_name(np *p, const en_hi_name *name) {
    memset(p, 0, sizeof *p);
    p->kind = NP_NAME;
    p->name = name;
    agr a = {3, NUM_SG, name->g};
    p->a = a;
}

static void np_set_noun(np *p, const en_hi_noun *n, int det, int plural) {
    memset(p, 0, sizeof *p);
    p->kind = NP_NOUN;
    p->noun = n;
    p->det = det;
    p->plural = plural;
    p->a = noun_agr(n, plural);
}

static const char *noun_en(const en_hi_noun *n, int plural) { return plural ? n->en_pl : n->en; }

static void en_possessor(text *out, const possessor *q) {
    if (q->kind == NP_PRON) {
        text_add(out, en_hi_pronouns[q->pron].en_poss);
    } else if (q->kind == NP_NAME) {
        text_add(out, q->name->en);
        text_raw(out, "'s");
    } else {
        const char *w = noun_en(q->noun, q->plural);
        text_add(out, "the");
        text_add(out, w);
        text_raw(out, ends_with(w, "s") ? "'" : "'s");
    }
}

enum { EN_SUBJECT, EN_OBJECT };

static void en_np(text *out, const np *p, int role) {
    if (p->kind == NP_PRON) {
        const en_hi_pronoun *pr = &en_hi_pronouns[p->pron];
        text_add(out, role == EN_SUBJECT ? pr->en : pr->en_obj);
        return;
    }
    if (p->kind == NP_NAME) {
        text_add(out, p->name->en);
        return;
    }
    const char *next = p->adj ? p->adj->en : noun_en(p->noun, p->plural);
    switch (p->det) {
    case DET_THE: text_add(out, "the"); break;
    case DET_A: text_add(out, strchr("aeiou", next[0]) ? "an" : "a"); break;
    case DET_NUM: text_add(out, p->numeral->en); break;
    case DET_POSS: en_possessor(out, &p->poss); break;
    default: break;
    }
    if (p->adj) text_add(out, p->adj->en);
    text_add(out, noun_en(p->noun, p->plural));
}

/* Adds a word that agrees with a head noun to the meta list "word:g.number.case", which the checker
 * verifies (मेरी:f.sg.d, लंबे:m.pl.o). */
static void note_agreement(text *agrs, const char *word, agr head, int oblique) {
    if (agrs->n) text_raw(agrs, ",");
    text_raw(agrs, word);
    text_raw(agrs, ":");
    text_raw(agrs, head.g == 'f' ? "f." : "m.");
    text_raw(agrs, number_name(head.number));
    text_raw(agrs, oblique ? ".o" : ".d");
}

/* A genitive in -ā agreeing with `head` (मेरी, अपने, राम का, लड़कों की). */
static void hi_genitive(text *out, const possessor *q, int reflexive, agr head, int oblique, text *agrs) {
    text word;
    const char *lemma = reflexive ? "अपना" : q->kind == NP_PRON ? en_hi_pronouns[q->pron].hi_gen : "का";
    if (!reflexive && q->kind == NP_NAME) {
        text_add(out, q->name->hi);
    } else if (!reflexive && q->kind == NP_NOUN) {
        hi_noun(&word, q->noun, q->plural, 1);
        text_add(out, word.s);
    }
    hi_aa(&word, lemma, head.g, agr_plural(head) || oblique);
    text_add(out, word.s);
    note_agreement(agrs, word.s, head, oblique);
}

/* The Hindi words of a noun phrase, direct or oblique: [genitive] [एक|numeral] [adjective] noun. */
static void hi_np_words(text *out, const np *p, int oblique, text *agrs) {
    if (p->kind == NP_NAME) {
        text_add(out, p->name->hi);
        return;
    }
    const en_hi_noun *n = p->noun;
    text word;
    if (p->det == DET_POSS) hi_genitive(out, &p->poss, p->reflexive, p->a, oblique, agrs);
    if (p->det == DET_A && !p->drop_ek) text_add(out, "एक");
    if (p->det == DET_NUM) text_add(out, p->numeral->hi);
    if (p->adj) {
        hi_adj(&word, p->adj, (n->sem & (S_HUM | S_ANI)) != 0, n->g, agr_plural(p->a) || oblique);
        text_add(out, word.s);
        if (p->adj->variable) note_agreement(agrs, word.s, p->a, oblique);
    }
    hi_noun(&word, n, p->plural, oblique);
    text_add(out, word.s);
}

/* A noun phrase with a postposition: NULL (direct case), "ने", "को", "से", a compound "के ..." or a
 * simple "में"/"पर"; or "का" for a genitive agreeing with a following singular noun of gender
 * head_g (राम की मदद, मेरा इंतज़ार). Pronouns fuse with ने/को/से (मैंने, मुझे, मुझसे) and take the
 * genitive before के (मेरे पास). */
static void hi_np(text *out, const np *p, const char *post, char head_g, text *agrs) {
    text word;
    if (p->kind == NP_PRON) {
        const en_hi_pronoun *pr = &en_hi_pronouns[p->pron];
        if (!post) {
            text_add(out, pr->hi);
        } else if (!strcmp(post, "ने")) {
            text_add(out, pr->hi_erg);
        } else if (!strcmp(post, "को")) {
            text_add(out, pr->hi_dat);
        } else if (!strcmp(post, "से")) {
            text_add(out, pr->hi_se);
        } else {
            int compound = !strncmp(post, "के ", strlen("के "));
            agr head = {3, NUM_SG, compound ? 'm' : head_g};
            hi_aa(&word, pr->hi_gen, head.g, compound);
            text_add(out, word.s);
            note_agreement(agrs, word.s, head, compound);
            if (compound) text_add(out, post + strlen("के "));
        }
        return;
    }
    hi_np_words(out, p, post != NULL, agrs);
    if (post && !strcmp(post, "का")) {
        agr head = {3, NUM_SG, head_g};
        hi_aa(&word, "का", head_g, 0);
        text_add(out, word.s);
        note_agreement(agrs, word.s, head, 0);
    } else {
        text_add(out, post);
    }
}

/* ------------------------------------------------------------------------------------- sentences */

enum { MOOD_ST, MOOD_YN, MOOD_WH };

/* One sentence being built: its Hindi in pieces (joined in Hindi order by finish()), its English,
 * and the meta fields. */
typedef struct parts {
    rng *r;
    np subj;
    text voc;                            /* vocative: "सीता," */
    text s, t, pl, b, rc, o, wh, lw, v;  /* subject, time, place, beneficiary (के लिए), recipient,
                                            object, wh-word, light word or predicate, verb group */
    int neg, mood;
    text en_voc, en;                     /* English vocative ("Sita,") and clause */
    text se;                             /* English subject */
    text agrs;                           /* words agreeing with a noun: word:g.n.c,... */
    text meta;                           /* frame-specific fields */
    text line_en, line_hi, line_meta;    /* the finished pair */
} parts;

static void meta_add(text *meta, const char *key, const char *value) {
    if (!value || !*value) return;
    if (meta->n) text_raw(meta, "\t");
    text_raw(meta, key);
    text_raw(meta, "=");
    text_raw(meta, value);
}

static void meta_agr(text *meta, const char *key, agr a) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%s.%c", a.person, number_name(a.number), a.g);
    meta_add(meta, key, buf);
}

static int word_count(const char *s) {
    int n = 0;
    for (const char *c = s; *c; c++)
        if (*c != ' ' && (c == s || c[-1] == ' ')) n++;
    return n;
}

/* Joins the pieces into the pair and its meta line; 0 if the sentence is unusable. */
static int finish(parts *p, const char *frame, const char *tense) {
    static const char *moods[] = {"st", "yn", "wh"};
    /* the Hindi pieces in Hindi order, with their meta keys; क्या follows the vocative, नहीं precedes
     * the verb group */
    const struct {
        const char *key;
        text *piece;
    } pieces[] = {{"voc", &p->voc}, {"s", &p->s},   {"t", &p->t},   {"pl", &p->pl}, {"b", &p->b},
                  {"r", &p->rc},    {"o", &p->o},   {"wh", &p->wh}, {"lw", &p->lw}, {"v", &p->v}};
    text *hi = &p->line_hi, *en = &p->line_en, *m = &p->line_meta;
    text_clear(hi);
    text_clear(m);
    meta_add(m, "frame", frame);
    meta_add(m, "tense", tense);
    meta_add(m, "pol", p->neg ? "neg" : "aff");
    meta_add(m, "mood", moods[p->mood]);
    meta_agr(m, "sa", p->subj.a);
    meta_add(m, "se", p->se.s);
    for (int i = 0; i < COUNT(pieces); i++) {
        if (pieces[i].piece == &p->v && p->neg) text_add(hi, "नहीं");
        text_add(hi, pieces[i].piece->s);
        if (pieces[i].piece == &p->voc && p->mood == MOOD_YN) text_add(hi, "क्या");
        meta_add(m, pieces[i].key, pieces[i].piece->s);
    }
    text_raw(hi, p->mood == MOOD_ST ? "।" : "?");
    meta_add(m, "agr", p->agrs.s);
    if (p->meta.n) {
        text_raw(m, "\t");
        text_raw(m, p->meta.s);
    }

    text_clear(en);
    text_add(en, p->en_voc.s);
    text_add(en, p->en.s);
    text_raw(en, p->mood == MOOD_ST ? "." : "?");
    if (en->s[0] >= 'a' && en->s[0] <= 'z') en->s[0] = (char)(en->s[0] - 'a' + 'A');

    int overflow = 0;
    for (int i = 0; i < COUNT(pieces); i++) overflow |= pieces[i].piece->overflow;
    const text *others[] = {&p->en_voc, &p->en, &p->se, &p->agrs, &p->meta, hi, en, m};
    for (int i = 0; i < COUNT(others); i++) overflow |= others[i]->overflow;
    int words = word_count(en->s);
    return !overflow && words >= 3 && words <= 12;
}

static void parts_init(parts *p, rng *r) {
    memset(p, 0, sizeof *p);
    p->r = r;
}

/* ---------------------------------------------------------------------------------- choosing words */

typedef int (*noun_test)(const en_hi_noun *n, const void *ctx);

/* A uniformly chosen noun that passes `test` (reservoir sampling), or NULL. */
static const en_hi_noun *pick_noun(rng *r, noun_test test, const void *ctx) {
    const en_hi_noun *chosen = NULL;
    int seen = 0;
    for (int i = 0; i < COUNT(en_hi_nouns); i++)
        if (test(&en_hi_nouns[i], ctx) && pick(r, ++seen) == 0) chosen = &en_hi_nouns[i];
    return chosen;
}

static const en_hi_adj *pick_adj(rng *r, unsigned fits) {
    const en_hi_adj *chosen = NULL;
    int seen = 0;
    for (int i = 0; i < COUNT(en_hi_adjs); i++)
        if ((en_hi_adjs[i].fits & fits) && pick(r, ++seen) == 0) chosen = &en_hi_adjs[i];
    return chosen;
}

static const en_hi_place *pick_place(rng *r, unsigned kinds, int destination) {
    const en_hi_place *chosen = NULL;
    int seen = 0;
    for (int i = 0; i < COUNT(en_hi_places); i++) {
        const en_hi_place *pl = &en_hi_places[i];
        if ((pl->kind & kinds || destination) && (!destination || pl->en_to) && pick(r, ++seen) == 0) chosen = pl;
    }
    return chosen;
}

static const en_hi_time *pick_time(rng *r, int tense) {
    const en_hi_time *chosen = NULL;
    int seen = 0;
    for (int i = 0; i < COUNT(en_hi_times); i++)
        if (en_hi_times[i].tense == tense && pick(r, ++seen) == 0) chosen = &en_hi_times[i];
    return chosen;
}

static const en_hi_name *pick_name(rng *r, const en_hi_name *avoid) {
    const en_hi_name *name;
    do name = &en_hi_names[pick(r, COUNT(en_hi_names))];
    while (name == avoid);
    return name;
}

typedef struct sem_query {
    unsigned sem;              /* any of these roles */
    unsigned adj;              /* or any of these adjective classes */
    unsigned rel;              /* or any of these relations */
    const en_hi_noun *avoid;
} sem_query;

static int test_sem(const en_hi_noun *n, const void *ctx) {
    const sem_query *q = ctx;
    return n != q->avoid && ((n->sem & q->sem) || (n->adj & q->adj) || (n->rel & q->rel));
}

static int has_plural(const en_hi_noun *n) { return !(n->flags & (N_MASS | N_NOPL)); }

/* Whether the subject p->subj is the possessor q ("I ... my book" → अपनी किताब). */
static int possessor_is_subject(const parts *p, const possessor *q) {
    if (p->subj.kind != NP_PRON || q->kind != NP_PRON) return 0;
    const en_hi_pronoun *s = &en_hi_pronouns[p->subj.pron], *o = &en_hi_pronouns[q->pron];
    return s->person == o->person && (s->person == 2 || s->number == o->number);
}

/* A possessor for a noun phrase; in a subject (in_subject) any, elsewhere one that English does not
 * leave ambiguous: "his" in "he reads his book" could be his own (अपनी) or another's (उसकी), so a
 * third-person pronoun possesses an object only when the subject is I, we or you. Sets *reflexive. */
static void pick_possessor(parts *p, possessor *q, int in_subject, int *reflexive) {
    static const int prons[] = {PRON_I, PRON_TUM, PRON_HE, PRON_SHE, PRON_WE, PRON_THEY};
    const np *s = &p->subj;
    memset(q, 0, sizeof *q);
    *reflexive = 0;
    int k = pick(p->r, 100);
    int subject_person = s->kind == NP_PRON ? en_hi_pronouns[s->pron].person : 3;
    if (k < 45) {
        q->kind = NP_PRON;
        if (!in_subject && subject_person != 3 && chance(p->r, 50)) {
            q->pron = s->pron == PRON_AP ? PRON_TUM : s->pron; /* "you ... your" (अपना) */
        } else {
            do q->pron = prons[pick(p->r, COUNT(prons))];
            while (!in_subject && en_hi_pronouns[q->pron].person == 3 && subject_person == 3);
        }
        *reflexive = !in_subject && possessor_is_subject(p, q);
    } else if (k < 80) {
        q->kind = NP_NAME;
        q->name = pick_name(p->r, !in_subject && s->kind == NP_NAME ? s->name : NULL);
    } else {
        sem_query want = {S_HUM, 0, 0, !in_subject && s->kind == NP_NOUN ? s->noun : NULL};
        const en_hi_noun *n;
        do n = pick_noun(p->r, test_sem, &want);
        while (n->sem & S_KIN);
        q->kind = NP_NOUN;
        q->noun = n;
        q->plural = chance(p->r, 30);
    }
}

/* Determiner, number and adjective of a noun phrase around n. `definite` rules out "a" and bare
 * plurals (animate objects, which take को); `adj_percent` is the chance of an adjective. */
static void pick_noun_np(parts *p, np *out, const en_hi_noun *n, int in_subject, int definite, int adj_percent) {
    int det, plural = 0;
    int k = pick(p->r, 100);
    if (n->flags & N_MASS) {
        det = in_subject ? DET_THE : DET_NONE;
    } else if (n->sem & S_KIN || (k < 20 && !(n->sem & S_HUM))) { /* "my sister", not "Ram's king" */
        det = DET_POSS;
        plural = has_plural(n) && chance(p->r, 25);
    } else if (k < 55 || (n->flags & N_NOPL)) {
        det = in_subject || definite || chance(p->r, 40) ? DET_THE : DET_A;
    } else if (k < 80) {
        det = in_subject || definite ? DET_THE : chance(p->r, 50) ? DET_THE : DET_NONE;
        plural = 1;
    } else {
        det = DET_NUM;
        plural = 1;
    }
    if (n->flags & N_PLONLY) {
        plural = 1;
        if (det == DET_A || det == DET_NUM) det = DET_THE;
    }
    if (n->flags & N_PROPER) det = DET_NONE;
    np_set_noun(out, n, det, plural);
    if (det == DET_NUM) out->numeral = &en_hi_numbers[pick(p->r, COUNT(en_hi_numbers))];
    if (det == DET_POSS) pick_possessor(p, &out->poss, in_subject, &out->reflexive);
    if (det == DET_POSS && out->poss.kind == NP_NOUN && out->poss.noun == n) out->det = DET_THE; /* not "the boy's boy" */
    if (n->adj && chance(p->r, adj_percent)) out->adj = pick_adj(p->r, n->adj);
}

/* A person (or animal, if `sem` allows) who is not the subject, as an object or recipient:
 * a pronoun (not the subject's person: no "I see me"), a name or a definite noun phrase. */
static void pick_other(parts *p, np *out, unsigned sem) {
    static const int prons[] = {PRON_I, PRON_TUM, PRON_HE, PRON_SHE, PRON_WE, PRON_THEY};
    const np *s = &p->subj;
    int k = pick(p->r, 100);
    if (k < 25) {
        int pron, person, subject_person = s->kind == NP_PRON ? en_hi_pronouns[s->pron].person : 3;
        do {
            pron = prons[pick(p->r, COUNT(prons))];
            person = en_hi_pronouns[pron].person;
        } while (person != 3 && person == subject_person);
        np_set_pron(out, pron);
    } else if (k < 50) {
        np_set_name(out, pick_name(p->r, s->kind == NP_NAME ? s->name : NULL));
    } else {
        sem_query want = {sem, 0, 0, s->kind == NP_NOUN ? s->noun : NULL};
        pick_noun_np(p, out, pick_noun(p->r, test_sem, &want), 0, 1, 15);
    }
}

/* The subject: a pronoun, a name or a noun phrase that can do what `q` asks. A question never has
 * I or we as its subject. "you" is तुम, given a gender by a vocative name 35% of the time, or आप
 * with "Sir,"/"Madam," before it. Sets p->subj, p->voc, p->en_voc, p->se. */
static void pick_subject(parts *p, const sem_query *q, int question) {
    static const int weights[PRON_COUNT] = {4, 3, 2, 3, 3, 2, 2};
    int people = (q->sem & S_HUM) || (q->adj & A_HUM);
    int k = pick(p->r, 100);
    text_clear(&p->voc);
    text_clear(&p->en_voc);
    if (people && k < 40) {
        int pron;
        do {
            int w = pick(p->r, 19);
            for (pron = 0; w >= weights[pron]; pron++) w -= weights[pron];
        } while (question && (pron == PRON_I || pron == PRON_WE));
        np_set_pron(&p->subj, pron);
        if (pron == PRON_AP) {
            int madam = chance(p->r, 50);
            p->subj.a.g = madam ? 'f' : 'm';
            text_set(&p->voc, madam ? "मैडम," : "सर,");
            text_set(&p->en_voc, madam ? "Madam," : "Sir,");
        } else if (pron == PRON_TUM && chance(p->r, 35)) {
            const en_hi_name *name = pick_name(p->r, NULL);
            p->subj.a.g = name->g;
            text_set(&p->voc, name->hi);
            text_raw(&p->voc, ",");
            text_set(&p->en_voc, name->en);
            text_raw(&p->en_voc, ",");
        }
    } else if (people && k < 60) {
        np_set_name(&p->subj, pick_name(p->r, NULL));
    } else {
        pick_noun_np(p, &p->subj, pick_noun(p->r, test_sem, q), 1, 1, q->adj ? 0 : 20);
    }
    text_clear(&p->se);
    en_np(&p->se, &p->subj, EN_SUBJECT);
}

/* ------------------------------------------------------------------------------------ English verbs */

typedef struct en_verb {
    const char *base, *s, *past, *ing;
} en_verb;

static const char *en_be(agr a, int past) {
    if (a.person == 1 && a.number == NUM_SG) return past ? "was" : "am";
    if (en_third_singular(a)) return past ? "was" : "is";
    return past ? "were" : "are";
}

/* English subject and verb group: "she drinks", "do you drink", "what is he eating", "I did not go". */
static void en_clause(text *en, const en_verb *f, const char *subject, agr a, int tense, int neg, int mood,
                      const char *wh) {
    int third = en_third_singular(a);
    text_add(en, wh);
    if (mood != MOOD_ST) {
        const char *aux = tense == T_HAB ? (third ? "does" : "do") : tense == T_PROG ? en_be(a, 0)
                        : tense == T_PAST ? "did" : "will";
        text_add(en, aux);
        text_add(en, subject);
        text_add(en, tense == T_PROG ? f->ing : f->base);
        return;
    }
    text_add(en, subject);
    switch (tense) {
    case T_HAB:
        if (neg) text_add(en, third ? "does not" : "do not");
        text_add(en, neg ? f->base : third ? f->s : f->base);
        break;
    case T_PROG:
        text_add(en, en_be(a, 0));
        if (neg) text_add(en, "not");
        text_add(en, f->ing);
        break;
    case T_PAST:
        if (neg) text_add(en, "did not");
        text_add(en, neg ? f->base : f->past);
        break;
    default:
        text_add(en, neg ? "will not" : "will");
        text_add(en, f->base);
        break;
    }
}

/* "the tea is hot", "is the tea hot", "where is the tea", "the tea was not hot" */
static void en_copula(text *en, const char *subject, agr a, int past, int neg, int mood, const char *wh) {
    text_add(en, wh);
    if (mood != MOOD_ST) {
        text_add(en, en_be(a, past));
        text_add(en, subject);
        return;
    }
    text_add(en, subject);
    text_add(en, en_be(a, past));
    if (neg) text_add(en, "not");
}

static int pick_mood(rng *r, int yn_percent, int wh_percent) {
    int k = pick(r, 100);
    return k < yn_percent ? MOOD_YN : k < yn_percent + wh_percent ? MOOD_WH : MOOD_ST;
}

/* ------------------------------------------------------------------------------- the action frame */

typedef struct action {
    const en_hi_verb *v;
    int tense;
    np obj, rcp, ben;            /* object, recipient, beneficiary */
    int has_obj, has_rcp, has_ben;
    const en_hi_place *place;    /* location, or destination of a V_GOAL verb */
    const en_hi_time *time;
    const char *wh;              /* "what" or "where" (mood MOOD_WH) */
} action;

static const char *tense_names[T_COUNT] = {"hab", "prog", "past", "fut"};

/* Whether verb v takes noun n as its object ("eat grass" only for animals). */
static int verb_takes(const en_hi_verb *v, const en_hi_noun *n, int animal_subject) {
    unsigned own = n->sem & v->obj & ~(unsigned)S_FODDER;
    if (!animal_subject || !(v->obj & (S_FOOD | S_DRINK))) return own != 0;
    return (n->sem & S_FODDER) && (own || (n->sem == S_FODDER && (v->obj & S_FODDER)));
}

typedef struct object_query {
    const en_hi_verb *v;
    int animal_subject;
    int inanimate_only;
    const en_hi_noun *avoid;
} object_query;

static int test_object(const en_hi_noun *n, const void *ctx) {
    const object_query *q = ctx;
    if (n == q->avoid || (q->inanimate_only && (n->sem & (S_HUM | S_ANI)))) return 0;
    return verb_takes(q->v, n, q->animal_subject);
}

/* Renders an action chosen in `a` with subject p->subj into p. */
static int render_action(parts *p, const action *a) {
    const en_hi_verb *v = a->v;
    int erg = a->tense == T_PAST && v->ergative;
    int marked = a->has_obj && v->frame == V_DIR && np_animate(&a->obj); /* animate objects take को */
    char hi_light_g = v->light_g ? v->light_g : 'm';

    hi_np(&p->s, &p->subj, erg ? "ने" : NULL, 0, &p->agrs);
    if (a->time) text_set(&p->t, a->time->hi);
    if (a->place) text_set(&p->pl, v->frame == V_GOAL ? a->place->hi_to : a->place->hi_at);
    if (a->has_ben) hi_np(&p->b, &a->ben, "के लिए", 0, &p->agrs);
    if (a->has_rcp) hi_np(&p->rc, &a->rcp, "को", 0, &p->agrs);
    if (a->has_obj) {
        const char *post = v->frame == V_SE ? "से" : v->frame == V_GEN ? "का" : marked ? "को" : NULL;
        hi_np(&p->o, &a->obj, post, hi_light_g, &p->agrs);
    }
    if (a->wh) text_set(&p->wh, !strcmp(a->wh, "what") ? "क्या" : "कहाँ");
    if (v->light) text_set(&p->lw, v->light);

    /* The verb agrees with the subject, except in the ergative past: there with the light noun or
     * an unmarked object, and in the masculine singular when neither is there (उसने लड़की को देखा). */
    agr ctl = p->subj.a;
    if (erg) {
        agr dflt = {3, NUM_SG, 'm'};
        ctl = dflt;
        if (v->light_g) ctl.g = v->light_g;
        else if (a->has_obj && !marked && v->frame != V_SE && v->frame != V_GEN) ctl = a->obj.a;
    }
    text w, aux;
    switch (a->tense) {
    case T_HAB:
        hi_habitual(&p->v, v->hi, ctl, !p->neg);
        if (!p->neg) text_add(&p->v, hi_aux_present(ctl));
        break;
    case T_PROG:
        text_set(&p->v, v->hi);
        hi_aa(&w, "रहा", ctl.g, agr_plural(ctl));
        text_add(&p->v, w.s);
        hi_aux(&aux, ctl, 0);
        text_add(&p->v, aux.s);
        break;
    case T_PAST:
        hi_perfective(&p->v, v, ctl.g, agr_plural(ctl));
        break;
    default:
        hi_future(&p->v, v, ctl);
        break;
    }

    en_verb f = {v->en, v->en_s, v->en_past, v->en_ing};
    en_clause(&p->en, &f, p->se.s, p->subj.a, a->tense, p->neg, p->mood, a->wh);
    if (a->has_obj) {
        if (v->frame != V_DAT) text_add(&p->en, v->en_prep);
        en_np(&p->en, &a->obj, EN_OBJECT);
    }
    if (a->has_rcp) {
        text_add(&p->en, v->en_prep);
        en_np(&p->en, &a->rcp, EN_OBJECT);
    }
    if (a->has_ben) {
        text_add(&p->en, "for");
        en_np(&p->en, &a->ben, EN_OBJECT);
    }
    if (a->place && v->frame == V_GOAL) {
        if (v->en_prep && strcmp(a->place->en_to, "home")) text_add(&p->en, v->en_prep);
        text_add(&p->en, a->place->en_to);
    } else if (a->place) {
        text_add(&p->en, a->place->en_at);
    }
    if (a->time) text_add(&p->en, a->time->en);

    char lg[2] = {v->light_g, 0};
    meta_add(&p->meta, "erg", v->ergative ? "1" : "0");
    meta_add(&p->meta, "oc", !a->has_obj ? "" : v->frame == V_SE ? "se" : v->frame == V_GEN ? "gen" : marked ? "ko" : "dir");
    if (a->has_obj) meta_agr(&p->meta, "oa", a->obj.a);
    meta_add(&p->meta, "lg", lg);
    meta_add(&p->meta, "eb", v->en);
    if (a->has_obj) {
        text eo;
        text_clear(&eo);
        en_np(&eo, &a->obj, EN_OBJECT);
        meta_add(&p->meta, "eo", eo.s);
    }
    return finish(p, "act", tense_names[a->tense]);
}

static int frame_action(parts *p) {
    static const int tense_weights[T_COUNT] = {30, 20, 30, 20};
    rng *r = p->r;
    action a;
    memset(&a, 0, sizeof a);
    a.v = &en_hi_verbs[pick(r, COUNT(en_hi_verbs))];
    const en_hi_verb *v = a.v;
    do {
        int w = pick(r, 100);
        for (a.tense = 0; w >= tense_weights[a.tense]; a.tense++) w -= tense_weights[a.tense];
    } while (!(v->tenses & (1u << a.tense)));

    int can_what = v->frame == V_DIR && (v->obj & ~(unsigned)(S_HUM | S_ANI));
    int can_where = v->frame == V_GOAL || (v->frame == V_INTR && v->places);
    p->mood = pick_mood(r, 14, can_what || can_where ? 9 : 0);
    p->neg = p->mood == MOOD_ST && chance(r, 22);
    if (p->mood == MOOD_WH) a.wh = can_what ? "what" : "where";

    sem_query subject = {v->subj, 0, 0, NULL};
    pick_subject(p, &subject, p->mood != MOOD_ST);
    int animal_subject = !np_human(&p->subj);

    switch (v->frame) {
    case V_DIR:
        if (!a.wh) {
            object_query q = {v, animal_subject, 0, p->subj.kind == NP_NOUN ? p->subj.noun : NULL};
            const en_hi_noun *n = pick_noun(r, test_object, &q);
            if (!n) return 0;
            a.has_obj = 1;
            if (n->sem & (S_HUM | S_ANI)) pick_other(p, &a.obj, v->obj & (S_HUM | S_ANI));
            else pick_noun_np(p, &a.obj, n, 0, 0, 25);
        }
        break;
    case V_SE:
    case V_GEN:
        a.has_obj = 1;
        pick_other(p, &a.obj, S_HUM);
        break;
    case V_DAT: {
        object_query q = {v, 0, 1, NULL};
        a.has_obj = a.has_rcp = 1;
        pick_noun_np(p, &a.obj, pick_noun(r, test_object, &q), 0, 0, 25);
        pick_other(p, &a.rcp, S_HUM);
        break;
    }
    case V_GOAL:
        if (!a.wh) a.place = pick_place(r, 0, 1);
        break;
    default:
        if (!a.wh && v->places && chance(r, 65)) a.place = pick_place(r, v->places, 0);
        break;
    }
    /* Hindi drops एक in a negated or questioned sentence: "मैंने कहानी नहीं लिखी" */
    a.obj.drop_ek = p->neg || p->mood == MOOD_YN;
    if (v->frame != V_GOAL && v->frame != V_INTR && v->places && chance(r, 25)) a.place = pick_place(r, v->places, 0);
    if (v->benefactive && chance(r, 20)) {
        a.has_ben = 1;
        pick_other(p, &a.ben, S_HUM);
    }

    /* "I read the book." would be present and past at once: a past of such a verb gets a time. */
    int past_like_base = !strcmp(v->en_past, v->en) && a.tense == T_PAST && p->mood == MOOD_ST && !p->neg &&
                         !en_third_singular(p->subj.a);
    if (past_like_base || chance(r, 35)) a.time = pick_time(r, a.tense);
    return render_action(p, &a);
}

/* ---------------------------------------------------------------------------------- the other frames */

/* "The tea is very hot." → "चाय बहुत गरम है।" */
static int frame_adjective(parts *p) {
    rng *r = p->r;
    int past = chance(r, 30);
    p->mood = pick_mood(r, 15, 0);
    p->neg = p->mood == MOOD_ST && chance(r, 20);
    sem_query subject = {0, A_HUM | A_ANI | A_EAT | A_OBJ | A_PLACE | A_PLANT | A_WORK, 0, NULL};
    pick_subject(p, &subject, p->mood != MOOD_ST);
    int animate = np_animate(&p->subj);
    const en_hi_adj *adj = pick_adj(r, p->subj.kind == NP_NOUN ? p->subj.noun->adj : A_HUM);
    int very = chance(r, 20);

    text word;
    hi_np(&p->s, &p->subj, NULL, 0, &p->agrs);
    hi_adj(&word, adj, animate, p->subj.a.g, agr_plural(p->subj.a));
    if (very) text_add(&p->lw, "बहुत");
    text_add(&p->lw, word.s);
    hi_aux(&p->v, p->subj.a, past);

    en_copula(&p->en, p->se.s, p->subj.a, past, p->neg, p->mood, NULL);
    if (very) text_add(&p->en, "very");
    text_add(&p->en, adj->en);
    meta_add(&p->meta, "adj", word.s);
    meta_add(&p->meta, "av", adj->variable ? "1" : "0");
    return finish(p, "adj", past ? "past" : "pres");
}

/* "The cat is under the bed." → "बिल्ली पलंग के नीचे है।"; "Where is Ram?" → "राम कहाँ है?" */
static int frame_location(parts *p) {
    rng *r = p->r;
    int past = chance(r, 25);
    p->mood = pick_mood(r, 12, 12);
    p->neg = p->mood == MOOD_ST && chance(r, 20);
    sem_query subject = {chance(r, 40) ? S_HUM : S_LOC, 0, 0, NULL};
    pick_subject(p, &subject, p->mood != MOOD_ST);
    hi_np(&p->s, &p->subj, NULL, 0, &p->agrs);
    en_copula(&p->en, p->se.s, p->subj.a, past, p->neg, p->mood, p->mood == MOOD_WH ? "where" : NULL);
    if (p->mood == MOOD_WH) {
        text_set(&p->wh, "कहाँ");
    } else if (np_human(&p->subj) || (np_animate(&p->subj) && chance(r, 40))) {
        const en_hi_place *place = pick_place(r, P_HOME | P_OUT | P_WORK | P_TOWN, 0);
        text_set(&p->pl, place->hi_at);
        text_add(&p->en, place->en_at);
    } else {
        sem_query want = {0, 0, R_IN | R_ON | R_UNDER | R_NEAR | R_BEHIND | R_FRONT, p->subj.noun};
        const en_hi_noun *ref = pick_noun(r, test_sem, &want);
        int rel;
        do rel = pick(r, R_COUNT);
        while (!(ref->rel & (1u << rel)));
        np where;
        if (chance(r, 30)) {
            /* my/your/our room, Ram's room: the subject is a thing, so no possessor is ambiguous */
            np_set_noun(&where, ref, DET_POSS, 0);
            do pick_possessor(p, &where.poss, 1, &where.reflexive);
            while (where.poss.kind == NP_PRON && en_hi_pronouns[where.poss.pron].person == 3);
        } else {
            np_set_noun(&where, ref, DET_THE, has_plural(ref) && chance(r, 10));
        }
        hi_np(&p->pl, &where, en_hi_relations[rel].hi, 0, &p->agrs);
        text_add(&p->en, en_hi_relations[rel].en);
        en_np(&p->en, &where, EN_OBJECT);
    }
    hi_aux(&p->v, p->subj.a, past);
    return finish(p, "loc", past ? "past" : "pres");
}

/* "Ram has a red ball." → "राम के पास एक लाल गेंद है।" The verb agrees with the thing possessed. */
static int frame_have(parts *p) {
    static const en_verb have = {"have", "has", "had", "having"};
    rng *r = p->r;
    int past = chance(r, 25);
    p->mood = pick_mood(r, 15, 0);
    p->neg = p->mood == MOOD_ST && chance(r, 20);
    sem_query subject = {S_HUM, 0, 0, NULL};
    pick_subject(p, &subject, p->mood != MOOD_ST);
    sem_query thing = {S_HAVE | S_PET, 0, 0, NULL};
    const en_hi_noun *n = pick_noun(r, test_sem, &thing);
    np item;
    int several = has_plural(n) && chance(r, 30);
    np_set_noun(&item, n, several ? DET_NUM : DET_A, several);
    if (several) item.numeral = &en_hi_numbers[pick(r, COUNT(en_hi_numbers))];
    if (chance(r, 30)) item.adj = pick_adj(r, n->adj);
    item.drop_ek = p->neg || p->mood == MOOD_YN;

    hi_np(&p->s, &p->subj, "के पास", 0, &p->agrs);
    hi_np(&p->o, &item, NULL, 0, &p->agrs);
    hi_aux(&p->v, item.a, past);
    en_clause(&p->en, &have, p->se.s, p->subj.a, past ? T_PAST : T_HAB, p->neg, p->mood, NULL);
    en_np(&p->en, &item, EN_OBJECT);
    meta_agr(&p->meta, "oa", item.a);
    meta_add(&p->meta, "eb", "have");
    return finish(p, "have", past ? "past" : "pres");
}

/* "I like mangoes." → "मुझे आम पसंद हैं।" A dative subject; the verb agrees with what is liked. */
static int frame_like(parts *p) {
    static const en_verb like = {"like", "likes", "liked", "liking"};
    rng *r = p->r;
    p->mood = pick_mood(r, 15, 0);
    p->neg = p->mood == MOOD_ST && chance(r, 20);
    sem_query subject = {S_HUM, 0, 0, NULL};
    pick_subject(p, &subject, p->mood != MOOD_ST);
    sem_query likable = {S_LIKE, 0, 0, p->subj.kind == NP_NOUN ? p->subj.noun : NULL};
    const en_hi_noun *n = pick_noun(r, test_sem, &likable);
    np thing;
    int k = pick(r, 100);
    if (!has_plural(n)) np_set_noun(&thing, n, DET_NONE, 0);
    else if (k < 60) np_set_noun(&thing, n, DET_NONE, 1);
    else if (k < 80) np_set_noun(&thing, n, DET_THE, 0);
    else {
        np_set_noun(&thing, n, DET_POSS, 0);
        pick_possessor(p, &thing.poss, 0, &thing.reflexive);
    }

    hi_np(&p->s, &p->subj, "को", 0, &p->agrs);
    hi_np(&p->o, &thing, NULL, 0, &p->agrs);
    text_set(&p->lw, "पसंद");
    hi_aux(&p->v, thing.a, 0);
    en_clause(&p->en, &like, p->se.s, p->subj.a, T_HAB, p->neg, p->mood, NULL);
    en_np(&p->en, &thing, EN_OBJECT);
    meta_agr(&p->meta, "oa", thing.a);
    meta_add(&p->meta, "eb", "like");
    return finish(p, "like", "pres");
}

/* One random sentence into p; 0 if this draw produced nothing usable. */
static int draw_sentence(rng *r, parts *p) {
    parts_init(p, r);
    int k = pick(r, 100);
    if (k < 58) return frame_action(p);
    if (k < 70) return frame_adjective(p);
    if (k < 80) return frame_location(p);
    if (k < 90) return frame_have(p);
    return frame_like(p);
}

/* "I drink tea." through the same grammar: the quickstart's sentence, reserved for the test split. */
static int reserved_sentence(rng *r, parts *p) {
    parts_init(p, r);
    action a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < COUNT(en_hi_verbs); i++)
        if (!strcmp(en_hi_verbs[i].en, "drink")) a.v = &en_hi_verbs[i];
    for (int i = 0; i < COUNT(en_hi_nouns); i++)
        if (en_hi_nouns[i].en && !strcmp(en_hi_nouns[i].en, "tea")) np_set_noun(&a.obj, &en_hi_nouns[i], DET_NONE, 0);
    a.tense = T_HAB;
    a.has_obj = 1;
    np_set_pron(&p->subj, PRON_I);
    en_np(&p->se, &p->subj, EN_SUBJECT);
    return render_action(p, &a) && !strcmp(p->line_en.s, "I drink tea.") && !strcmp(p->line_hi.s, "मैं चाय पीता हूँ।");
}

/* --------------------------------------------------------------------------------------- the corpus */

/* Pairs in the order drawn, with a hash index on the English side. */
typedef struct corpus {
    char **en, **hi, **meta;
    size_t n, cap;
    size_t *slots;   /* open addressing: index + 1 of a pair, 0 = empty */
    size_t nslots;   /* a power of two, at least twice cap */
    nmt_arena text;
} corpus;

static uint64_t hash_string(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int corpus_init(corpus *c, size_t cap) {
    memset(c, 0, sizeof *c);
    nmt_arena_init(&c->text, 1 << 20);
    c->cap = cap;
    c->nslots = 16;
    while (c->nslots < 2 * cap) c->nslots *= 2;
    c->en = nmt_calloc(cap, sizeof *c->en);
    c->hi = nmt_calloc(cap, sizeof *c->hi);
    c->meta = nmt_calloc(cap, sizeof *c->meta);
    c->slots = nmt_calloc(c->nslots, sizeof *c->slots);
    return c->en && c->hi && c->meta && c->slots ? 0 : -1;
}

static void corpus_free(corpus *c) {
    free(c->en);
    free(c->hi);
    free(c->meta);
    free(c->slots);
    nmt_arena_free(&c->text);
}

static char *arena_copy(nmt_arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *copy = nmt_arena_alloc(a, n);
    if (copy) memcpy(copy, s, n);
    return copy;
}

/* Adds a pair unless its English is there: 1 added, 0 already there with the same Hindi, -1 on an
 * error (the same English with another Hindi, or no memory). */
static int corpus_add(corpus *c, const char *en, const char *hi, const char *meta) {
    size_t mask = c->nslots - 1, i = hash_string(en) & mask;
    for (; c->slots[i]; i = (i + 1) & mask) {
        size_t k = c->slots[i] - 1;
        if (strcmp(c->en[k], en)) continue;
        if (!strcmp(c->hi[k], hi)) return 0;
        return nmt_error_set("grammar bug: \"%s\" has two translations, \"%s\" and \"%s\"", en, c->hi[k], hi);
    }
    if (c->n == c->cap) return nmt_error_set("corpus full (%zu pairs)", c->cap);
    c->en[c->n] = arena_copy(&c->text, en);
    c->hi[c->n] = arena_copy(&c->text, hi);
    c->meta[c->n] = arena_copy(&c->text, meta);
    if (!c->en[c->n] || !c->hi[c->n] || !c->meta[c->n]) return -1;
    c->slots[i] = ++c->n;
    return 1;
}

static const char *const split_names[] = {"test", "valid", "train"};
static const char *const side_names[] = {"en", "hi", "meta"};

/* Removes the corpus files from dir, so that a run that fails or is killed half-way never leaves
 * splits of two different runs side by side: train.meta, written last, marks a complete corpus. */
static void remove_splits(const char *dir) {
    for (int s = 0; s < 3; s++)
        for (int side = 0; side < 3; side++) {
            char file[64];
            snprintf(file, sizeof file, "%s.%s", split_names[s], side_names[side]);
            char *path = nmt_path_join(dir, file);
            if (path) remove(path);
            free(path);
        }
}

/* Writes pairs [from, from+count) as DIR/NAME.{en,hi,meta}. */
static int write_split(const corpus *c, const char *dir, const char *name, size_t from, size_t count) {
    for (int s = 0; s < 3; s++) {
        char file[64];
        snprintf(file, sizeof file, "%s.%s", name, side_names[s]);
        char *path = nmt_path_join(dir, file);
        if (!path) return -1;
        nmt_atomic_file f;
        int rc = nmt_atomic_open(&f, path);
        char **lines = s == 0 ? c->en : s == 1 ? c->hi : c->meta;
        for (size_t i = from; rc == 0 && i < from + count; i++) {
            rc = nmt_io_write(f.fp, lines[i], strlen(lines[i]), path);
            if (rc == 0) rc = nmt_io_write(f.fp, "\n", 1, path);
        }
        if (rc == 0) rc = nmt_atomic_commit(&f);
        else nmt_atomic_abort(&f);
        free(path);
        if (rc) return -1;
    }
    return 0;
}

/* Draws train+valid+test distinct pairs from `seed` and writes the three splits into dir. */
static int generate(const char *dir, uint64_t seed, size_t train, size_t valid, size_t test) {
    size_t total = train + valid + test;
    rng r = {seed};
    corpus c;
    parts *p = nmt_malloc(sizeof *p);
    int rc = p && corpus_init(&c, total) == 0 ? 0 : -1;
    if (rc == 0 && !reserved_sentence(&r, p)) rc = nmt_error_set("internal error: \"I drink tea.\" renders as \"%s\" → \"%s\"",
                                                                 p->line_en.s, p->line_hi.s);
    if (rc == 0) rc = corpus_add(&c, p->line_en.s, p->line_hi.s, p->line_meta.s) == 1 ? 0 : -1;
    /* A grammar this size holds millions of sentences; a long run of repeats means it is exhausted. */
    long misses = 0, max_misses = 1000000;
    while (rc == 0 && c.n < total) {
        if (!draw_sentence(&r, p)) continue;
        int added = corpus_add(&c, p->line_en.s, p->line_hi.s, p->line_meta.s);
        if (added < 0) rc = -1;
        else if (added == 1) misses = 0;
        else if (++misses == max_misses)
            rc = nmt_error_set("the grammar gave only %zu distinct sentences of the %zu asked for", c.n, total);
    }
    if (rc == 0) rc = nmt_mkdirs(dir);
    if (rc == 0) remove_splits(dir);
    /* the reserved pair (index 0) opens the test split; train is written last */
    size_t sizes[3] = {test, valid, train}, from = 0;
    for (int s = 0; rc == 0 && s < 3; from += sizes[s++]) rc = write_split(&c, dir, split_names[s], from, sizes[s]);
    if (rc) remove_splits(dir);
    if (p) corpus_free(&c);
    free(p);
    return rc;
}

/* ------------------------------------------------------------------------------------------- main */

static const char usage[] =
    "Usage: nmt-gen-en-hi --output DIR [--seed N] [--pairs N] [--valid N] [--test N]\n"
    "Generates the demo English-Hindi corpus: DIR/{train,valid,test}.{en,hi,meta}.\n"
    "  --output DIR  where to write (created if missing)\n"
    "  --seed N      random seed (default 1); the same seed gives the same files\n"
    "  --pairs N     training pairs (default 30000)\n"
    "  --valid N     validation pairs (default 1000)\n"
    "  --test N      test pairs (default 1000, at least 1: \"I drink tea.\" is the first)\n";

static int parse_size(const char *flag, const char *text, long min, long *out) {
    char *end;
    long value = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value < min || value > 10000000) {
        fprintf(stderr, "nmt-gen-en-hi: %s wants a whole number from %ld to 10000000, not '%s'\n", flag, min, text);
        return -1;
    }
    *out = value;
    return 0;
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"output", required_argument, 0, 'o'}, {"seed", required_argument, 0, 's'},
        {"pairs", required_argument, 0, 'p'},  {"valid", required_argument, 0, 'v'},
        {"test", required_argument, 0, 't'},   {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *output = NULL;
    long seed = 1, train = 30000, valid = 1000, test = 1000;
    int c, bad = 0;
    while (!bad && (c = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 's': bad = parse_size("--seed", optarg, 0, &seed); break;
        case 'p': bad = parse_size("--pairs", optarg, 0, &train); break;
        case 'v': bad = parse_size("--valid", optarg, 0, &valid); break;
        case 't': bad = parse_size("--test", optarg, 1, &test); break;
        case 'h': fputs(usage, stdout); return 0;
        default: bad = 1; break;
        }
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "nmt-gen-en-hi: unexpected argument '%s'\n", argv[optind]);
        bad = 1;
    }
    if (!bad && !output) {
        fprintf(stderr, "nmt-gen-en-hi: --output DIR is required\n");
        bad = 1;
    }
    if (bad) {
        fputs("Try 'nmt-gen-en-hi --help'.\n", stderr);
        return 2;
    }
    if (generate(output, (uint64_t)seed, (size_t)train, (size_t)valid, (size_t)test) != 0) {
        fprintf(stderr, "nmt-gen-en-hi: %s\n", nmt_error());
        return 1;
    }
    fprintf(stderr, "nmt-gen-en-hi: wrote %ld train, %ld valid, %ld test pairs to %s\n", train, valid, test, output);
    return 0;
}
