/* prefixes: nmt's nonbreaking-prefix lists per language and their lookup (rules in prefixes.h). */
#include "serve/prefixes.h"

#include <string.h>

struct nmt_serve_prefixes {
    const char *language;
    const char *always;  /* space-separated words that never end a sentence */
    const char *numeric; /* space-separated words that do not end one before a number */
    int ordinals;        /* a number of one or two digits with a '.' is an ordinal ("am 3. Mai") */
};

/* Titles, common abbreviations, months; the single capital letters of initials are added to every
 * language by nmt_serve_prefixes_find. */
static const nmt_serve_prefixes lists[] = {
    {"en",
     "Mr Mrs Ms Mx Messrs Dr Drs Prof Rev Hon Sr Jr St Mt Ft Gen Col Capt Lt Sgt Maj Cmdr Adm Brig Cpl Pvt Gov Sen "
     "Rep Pres Supt Insp Asst Assoc Dept Univ Inst Bros Corp Inc Ltd Mme Mlle Ph Fr "
     "e.g i.e cf vs v approx ca viz al "
     "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun",
     "No Nos Nr Art Arts p pp vol vols ch chap sec para fig figs eq ed", 0},
    {"de",
     "Hr Hrn Fr Frl Dr Prof Dipl Ing Mag Hg Hrsg St Pfr Gebr "
     "z.B d.h u.a o.a o.ä s.o s.u u.U z.T z.Zt i.d.R u.v.m bzw ca evtl ggf vgl sog bspw inkl exkl zzgl "
     "geb gest verh Str Tel Abt Jh Jhd Mio Mrd Std Min Sek "
     "Jan Feb Mär Apr Jun Jul Aug Sep Sept Okt Nov Dez Mo Di Mi Do Fr Sa So",
     "Nr Nrn S Art Abs Bd Bde Kap Ziff Anm Abb Tab Aufl", 1},
    {"fr",
     "M MM Mme Mmes Mlle Mlles Dr Pr Me Mgr St Ste Sts Stes Av av bd boul Cie "
     "cf ex p.ex c.-à-d env éd apr J.-C "
     "janv févr avr juil sept oct nov déc lun mar mer jeu ven sam dim",
     "p pp art vol chap fig t no", 0},
    {"cs",
     "Ing Mgr Bc MUDr JUDr PhDr RNDr MVDr PaedDr ThDr MgA BcA Ph.D CSc DrSc doc prof Dr "
     "tj tzn tzv např resp popř mj př srov cca sv ul nám čp "
     "led úno bře dub kvě čvn čvc srp zář říj lis pro",
     "č s str odst obr tab kap písm sb", 1},
    {"es",
     "Sr Sra Sres Sras Srta Dr Dra Dres Lic Ing Prof Arq Ud Uds Vd Vds Dña Mons Sto Sta Av Avda Cía "
     "aprox p.ej ej "
     "Ene Feb Mar Abr May Jun Jul Ago Sept Oct Nov Dic",
     "núm pág págs art cap vol fig", 0},
    {"it",
     "Sig Sigg Sigra Sig.na Dott Prof Avv Ing Arch Geom Rag On Gen Mons Egr Spett Gent S.p.A "
     "cfr ca es "
     "gen feb mar apr mag giu lug ago sett ott nov dic",
     "n pag pagg art cap vol fig", 0},
    {"pt",
     "Sr Sra Srta Srs Dr Dra Prof Profa Eng Exmo Exma Ilmo Ilma Av Sto Sta "
     "ex p.ex aprox "
     "jan fev mar abr mai jun jul ago set out nov dez",
     "n pág págs art cap vol fig", 0},
    {"nl",
     "dhr mevr mr dr drs ir ing prof St "
     "bijv bv d.w.z o.a m.a.w i.p.v t.a.v m.b.t z.g.a ca resp "
     "jan feb mrt apr jun jul aug sep sept okt nov dec",
     "nr blz art hfst fig", 0},
};

const nmt_serve_prefixes *nmt_serve_prefixes_of(const char *lang) {
    if (lang) {
        const size_t n = strcspn(lang, "-_");
        for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++)
            if (n == 2 && (lang[0] | 0x20) == lists[i].language[0] && (lang[1] | 0x20) == lists[i].language[1])
                return &lists[i];
    }
    return &lists[0];
}

const char *nmt_serve_prefixes_language(const nmt_serve_prefixes *p) { return p->language; }

/* Whether word[0..n) is one of list's space-separated words. */
static int listed(const char *list, const char *word, size_t n) {
    for (const char *w = list; *w;) {
        const size_t len = strcspn(w, " ");
        if (len == n && memcmp(w, word, n) == 0) return 1;
        w += len;
        while (*w == ' ') w++;
    }
    return 0;
}

nmt_serve_prefix nmt_serve_prefixes_find(const nmt_serve_prefixes *p, const char *word, size_t n) {
    if (n == 1 && word[0] >= 'A' && word[0] <= 'Z') return NMT_SERVE_PREFIX_ALWAYS;
    if (p->ordinals && n <= 2 && n > 0 && word[0] >= '0' && word[0] <= '9' && word[n - 1] >= '0' && word[n - 1] <= '9')
        return NMT_SERVE_PREFIX_ALWAYS;
    if (listed(p->always, word, n)) return NMT_SERVE_PREFIX_ALWAYS;
    if (listed(p->numeric, word, n)) return NMT_SERVE_PREFIX_NUMERIC;
    /* A lower-case abbreviation capitalized at the start of a sentence ("Bijv.", "Dhr.") */
    char lowered[32];
    if (n < 2 || n > sizeof lowered || word[0] < 'A' || word[0] > 'Z') return NMT_SERVE_PREFIX_NONE;
    memcpy(lowered, word, n);
    lowered[0] = (char)(lowered[0] - 'A' + 'a');
    if (listed(p->always, lowered, n)) return NMT_SERVE_PREFIX_ALWAYS;
    return listed(p->numeric, lowered, n) ? NMT_SERVE_PREFIX_NUMERIC : NMT_SERVE_PREFIX_NONE;
}
