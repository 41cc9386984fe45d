/* Tests of src/text/langid.cc: CLD2's guesses on a few sentences per language, restricted to a set of
 * languages (every code of the set answered once, the found ones first), and on mixed, short, empty
 * and invalid input. */
#include "text/langid.h"

#include "base/util.h"
#include "testing.h"

static const char *const served[] = {"en", "de", "fr", "cs", "es"};

/* The best guess for text among the served languages. */
static void guesses(const char *text, const char *want) {
    nmt_langid_guess out[5];
    const int n = nmt_langid_detect(text, strlen(text), served, 5, out);
    ck_assert_msg(n == 5, "'%s': %d guesses (%s)", text, n, nmt_error());
    ck_assert_msg(strcmp(out[0].language, want) == 0, "'%s': %s (%.0f), want %s", text, out[0].language,
                  out[0].confidence, want);
    ck_assert_msg(out[0].confidence > 50 && out[0].confidence <= 100, "'%s': confidence %g", text, out[0].confidence);
    for (int i = 1; i < n; i++) ck_assert(out[i].confidence <= out[i - 1].confidence);
}

START_TEST(test_languages) {
    guesses("A man in a blue shirt is standing on a ladder and cleaning the windows of the house.", "en");
    guesses("The children are playing football in the park while their parents watch them.", "en");
    guesses("Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt die Fenster des Hauses.", "de");
    guesses("Die Kinder spielen im Park Fußball, während ihre Eltern ihnen zuschauen.", "de");
    guesses("Un homme en chemise bleue est debout sur une échelle et nettoie les fenêtres de la maison.", "fr");
    guesses("Les enfants jouent au football dans le parc pendant que leurs parents les regardent.", "fr");
    guesses("Muž v modré košili stojí na žebříku a myje okna domu.", "cs");
    guesses("Děti hrají v parku fotbal, zatímco se na ně jejich rodiče dívají.", "cs");
    guesses("Un hombre con una camisa azul está de pie en una escalera y limpia las ventanas de la casa.", "es");
    guesses("Los niños juegan al fútbol en el parque mientras sus padres los miran.", "es");
}
END_TEST

START_TEST(test_set_and_shapes) {
    nmt_langid_guess out[5];
    /* Every code of the set once; the ones not found with 0, in the set's order. */
    const char *text = "Ein Mann in einem blauen Hemd steht auf einer Leiter.";
    ck_assert_int_eq(nmt_langid_detect(text, strlen(text), served, 5, out), 5);
    ck_assert_str_eq(out[0].language, "de");
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++) ck_assert_str_ne(out[i].language, out[j].language);
    ck_assert_double_eq(out[4].confidence, 0);
    /* Codes are matched case-insensitively and answered as the set spells them. */
    const char *upper[] = {"EN", "DE"};
    ck_assert_int_eq(nmt_langid_detect(text, strlen(text), upper, 2, out), 2);
    ck_assert_str_eq(out[0].language, "DE");
    /* A language outside the set is not answered: Italian among en and de gets zeros or a weak guess. */
    const char *italian = "Un uomo con una camicia blu sta pulendo le finestre della casa con cura.";
    ck_assert_int_eq(nmt_langid_detect(italian, strlen(italian), upper, 2, out), 2);
    ck_assert(out[0].confidence < 50);
    /* Without a set: CLD2's own candidates. */
    ck_assert_int_ge(nmt_langid_detect(italian, strlen(italian), NULL, 0, out), 1);
    ck_assert_str_eq(out[0].language, "it");
    /* Mixed text: both languages found, the longer part first. */
    const char *mixed = "The children are playing football in the park while their parents watch them from a bench. "
                        "Die Kinder spielen.";
    ck_assert_int_eq(nmt_langid_detect(mixed, strlen(mixed), served, 5, out), 5);
    ck_assert_str_eq(out[0].language, "en");
    ck_assert(out[0].confidence < 100);
    /* Short text gets CLD2's best effort; text without letters and empty text get zeros. */
    ck_assert_int_eq(nmt_langid_detect("Guten Morgen", 12, served, 5, out), 5);
    ck_assert(out[0].confidence <= 100);
    ck_assert_int_eq(nmt_langid_detect("", 0, served, 5, out), 5);
    for (int i = 0; i < 5; i++) ck_assert_double_eq(out[i].confidence, 0);
    ck_assert_str_eq(out[0].language, "en");
    ck_assert_int_eq(nmt_langid_detect("1234 !!", 7, NULL, 0, out), 0);
    /* Invalid UTF-8 and a code that is none are refused. */
    ck_assert_int_eq(nmt_langid_detect("ab\xff", 3, served, 5, out), -1);
    ck_assert_str_eq(nmt_error(), "text: invalid UTF-8 at byte 2");
    const char *bad[] = {"en", "not-a-language"};
    ck_assert_int_eq(nmt_langid_detect(text, strlen(text), bad, 2, out), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "language 2"));
}
END_TEST

/* A text longer than the limit is read up to it, cut at a character boundary. */
START_TEST(test_long_text) {
    const char *sentence = "Děti hrají v parku fotbal, zatímco se na ně jejich rodiče dívají. ";
    const size_t n = strlen(sentence), copies = 2 * NMT_LANGID_MAX_BYTES / n + 1;
    char *text = malloc(copies * n + 1);
    ck_assert_ptr_nonnull(text);
    for (size_t i = 0; i < copies; i++) memcpy(text + i * n, sentence, n);
    text[copies * n] = '\0';
    nmt_langid_guess out[5];
    ck_assert_int_eq(nmt_langid_detect(text, copies * n, served, 5, out), 5);
    ck_assert_str_eq(out[0].language, "cs");
    free(text);
}
END_TEST

/* The accuracy on the first 200 lines of the shared corpora's validation files (skipped without
 * them): the share of lines whose best guess among en, de, fr, cs, es is the file's language, printed
 * on stderr and held above 90% per file. */
START_TEST(test_corpus_accuracy) {
    static const char *const files[][2] = {
        {"multi30k/val.en", "en"}, {"multi30k/val.de", "de"}, {"multi30k/val.fr", "fr"},
        {"multi30k/val.cs", "cs"}, {"de-en/dev.en", "en"},    {"de-en/dev.de", "de"},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char path[512];
        snprintf(path, sizeof path, "%s/../shared/corpora/%s", NMT_SOURCE_DIR, files[f][0]);
        FILE *in = fopen(path, "r");
        if (!in) {
            fprintf(stderr, "langid accuracy: %s not found, skipped\n", files[f][0]);
            continue;
        }
        char line[4096];
        int lines = 0, right = 0;
        while (lines < 200 && fgets(line, sizeof line, in)) {
            line[strcspn(line, "\n")] = '\0';
            nmt_langid_guess out[5];
            ck_assert_int_eq(nmt_langid_detect(line, strlen(line), served, 5, out), 5);
            right += strcmp(out[0].language, files[f][1]) == 0 && out[0].confidence > 0;
            lines++;
        }
        fclose(in);
        fprintf(stderr, "langid accuracy: %s (%s): %d/%d = %.1f%%\n", files[f][0], files[f][1], right, lines,
                100.0 * right / lines);
        ck_assert_int_ge(10 * right, 9 * lines);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("langid");
    TCase *tc = tcase_create("langid");
    tcase_add_test(tc, test_languages);
    tcase_add_test(tc, test_set_and_shapes);
    tcase_add_test(tc, test_long_text);
    tcase_add_test(tc, test_corpus_accuracy);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
