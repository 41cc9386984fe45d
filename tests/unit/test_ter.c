/* Tests of ter: TER against the expected values of sacreBLEU 2.6's test/test_ter.py, the shift
 * search on word ids, the empty cases and the signature. */
#include "eval/ter.h"
#include "base/util.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static double corpus(const nmt_ter_options *o, const char *const *hyps, const char *const *refs, size_t n) {
    nmt_ter *ter = nmt_ter_create(o);
    ck_assert_ptr_nonnull(ter);
    double sum[2] = {0}, stats[2];
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(refs[i]);
        ck_assert_int_eq(nmt_ter_segment(ter, hyps[i], strlen(hyps[i]), &refs[i], &len, 1, stats), 0);
        sum[0] += stats[0];
        sum[1] += stats[1];
    }
    nmt_ter_free(ter);
    return nmt_ter_compute(sum, NMT_PYNUM_PYTHON);
}

static double one(const char *hyp, const char *ref) {
    nmt_ter_options o = nmt_ter_options_default();
    return corpus(&o, &hyp, &ref, 1);
}

START_TEST(published_values) {
    ck_assert_double_eq_tol(one("aaaa bbbb cccc dddd", "aaaa bbbb cccc dddd"), 0.0, 1e-3);
    ck_assert_double_eq_tol(one("dddd eeee ffff", "aaaa bbbb cccc"), 100.0, 1e-3);
    ck_assert_double_eq_tol(one("", "a"), 100.0, 1e-3);
    ck_assert_double_eq_tol(one("a", ""), 100.0, 1e-3);
    ck_assert_double_eq_tol(one("", ""), 0.0, 1e-3);
    ck_assert_double_eq_tol(one("d e f g h a b c", "a b c d e f g h"), 100.0 / 8, 1e-3); /* one shift */
    const char *hyps[] = {
        "wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .",
        "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
        "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und geben Sie Werte für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" ein .",
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .",
        "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \"",
    };
    const char *refs[] = {
        "wählen Sie \" Bild neu berechnen , \" um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .",
        "wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option \" Alle Aufgaben aktualisieren . \"",
        "klicken Sie auf der Registerkarte \" Optionen \" auf die Schaltfläche \" Benutzerdefiniert \" und geben Sie für \" Fehlerkorrektur-Level \" und \" Y / X-Verhältnis \" niedrigere Werte ein .",
        "Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .",
        "wählen Sie im Dialogfeld \" Neu aus Vorlage \" eine Vorlage aus und klicken Sie auf \" Neu . \"",
    };
    nmt_ter_options o = nmt_ter_options_default();
    ck_assert_double_eq_tol(corpus(&o, hyps, refs, 5), 13.6, 0.05); /* 0.136 in test_ter.py, to 1e-3 */
}
END_TEST

START_TEST(edits_on_ids) {
    nmt_ter_options o = nmt_ter_options_default();
    nmt_ter *ter = nmt_ter_create(&o);
    /* A block of three moved to the end: one shift, no other edit. */
    uint32_t hyp[] = {4, 5, 6, 1, 2, 3}, ref[] = {1, 2, 3, 4, 5, 6};
    ck_assert_int_eq(nmt_ter_edits(ter, hyp, 6, ref, 6), 1);
    /* Plain edit distance when no shift helps: one substitution and one insertion. */
    uint32_t h2[] = {1, 9, 3}, r2[] = {1, 2, 3, 4};
    ck_assert_int_eq(nmt_ter_edits(ter, h2, 3, r2, 4), 2);
    /* Empty sides. */
    ck_assert_int_eq(nmt_ter_edits(ter, hyp, 6, ref, 0), 6);
    ck_assert_int_eq(nmt_ter_edits(ter, hyp, 0, ref, 6), 6);
    /* A long sentence against itself reversed in halves stays finite and small. */
    uint32_t long_h[400], long_r[400];
    for (uint32_t i = 0; i < 400; i++) {
        long_r[i] = i;
        long_h[i] = (i + 200) % 400;
    }
    long e = nmt_ter_edits(ter, long_h, 400, long_r, 400);
    ck_assert(e > 0 && e <= 400);
    nmt_ter_free(ter);
}
END_TEST

START_TEST(options_and_signature) {
    nmt_ter_options o = nmt_ter_options_default();
    const char *h = "Hello, World.", *r = "hello world";
    ck_assert_double_eq_tol(corpus(&o, &h, &r, 1), 100.0, 1e-12); /* "hello," "world." vs "hello" "world" */
    o.no_punct = 1;
    ck_assert_double_eq_tol(corpus(&o, &h, &r, 1), 0.0, 1e-12);
    o.case_sensitive = 1;
    ck_assert_double_eq_tol(corpus(&o, &h, &r, 1), 100.0, 1e-12);
    nmt_signature_field f[5];
    o = nmt_ter_options_default();
    ck_assert_int_eq(nmt_ter_signature_fields(&o, f), 5);
    ck_assert_str_eq(f[0].value, "lc");
    ck_assert_str_eq(f[1].value, "tercom");
    ck_assert_str_eq(f[2].value, "no");
    ck_assert_str_eq(f[3].value, "yes");
    ck_assert_str_eq(f[4].value, "no");
    /* sacreBLEU tokenizes references twice: with normalization, "X'S\tY" first becomes "x's y" and
     * then "x 's y" (3 words), which the hypothesis matches exactly (sacreBLEU 2.6: stats [0, 3.0]). */
    o.normalized = 1;
    const char *h2 = "x's y", *r2 = "X'S\tY";
    nmt_ter *norm = nmt_ter_create(&o);
    size_t len2 = strlen(r2);
    double st[2];
    ck_assert_int_eq(nmt_ter_segment(norm, h2, strlen(h2), &r2, &len2, 1, st), 0);
    ck_assert_double_eq(st[0], 0);
    ck_assert_double_eq(st[1], 3.0);
    nmt_ter_free(norm);
    o = nmt_ter_options_default();
    /* two references: fewest edits, mean length */
    nmt_ter *ter = nmt_ter_create(&o);
    const char *refs[] = {"a b c d", "a x"};
    size_t lens[] = {7, 3};
    double stats[2];
    ck_assert_int_eq(nmt_ter_segment(ter, "a x", 3, refs, lens, 2, stats), 0);
    ck_assert_double_eq(stats[0], 0);
    ck_assert_double_eq(stats[1], 3.0);
    nmt_ter_free(ter);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ter");
    TCase *tc = tcase_create("ter");
    tcase_add_test(tc, published_values);
    tcase_add_test(tc, edits_on_ids);
    tcase_add_test(tc, options_and_signature);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
