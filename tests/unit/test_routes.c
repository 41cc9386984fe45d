/* Tests of src/serve/routes.c: a pair's route over the served models (one step, two through
 * English, refused in LibreTranslate's words naming the pairs held), /languages with the targets
 * reached through English, the model of an OpenNMT-py id, and detection restricted to the languages
 * served. */
#include "serve/routes.h"

#include "base/util.h"
#include "testing.h"

#include <stdlib.h>

static const nmt_serve_pair pairs[] = {{"en", "de"}, {"de", "en"}, {"en", "fr"}, {"ar", "en"}};
enum { N = 4 };

static void route_is(const char *source, const char *target, int first, int second) {
    nmt_serve_route r;
    ck_assert_msg(nmt_serve_route_find(pairs, N, source, target, &r) == 0, "%s-%s: %s", source, target, nmt_error());
    ck_assert_msg(r.first == first && r.second == second, "%s-%s: %d %d", source, target, r.first, r.second);
}

START_TEST(test_find) {
    route_is("en", "de", 0, -1);
    route_is("de", "en", 1, -1);
    route_is("de", "fr", 1, 2);
    route_is("ar", "de", 3, 0);
    route_is("ar", "fr", 3, 2);
    nmt_serve_route r;
    ck_assert_int_eq(nmt_serve_route_find(pairs, N, "xx", "de", &r), -1);
    ck_assert_str_eq(nmt_error(), "xx is not supported (this server translates en-de, de-en, en-fr, ar-en)");
    ck_assert_int_eq(nmt_serve_route_find(pairs, N, "fr", "de", &r), -1);
    ck_assert_str_eq(nmt_error(), "German (de) is not available as a target language from French (fr) (this server "
                                  "translates en-de, de-en, en-fr, ar-en, and through en where both steps are served)");
    ck_assert_int_eq(nmt_serve_route_find(pairs, N, "en", "ar", &r), -1);
    ck_assert_int_eq(nmt_serve_route_find(pairs, N, "de", "de", &r), -1);
}
END_TEST

START_TEST(test_languages) {
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    nmt_serve_route_languages(out, pairs, N);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_str_eq(text, "[{\"code\":\"en\",\"name\":\"English\",\"targets\":[\"de\",\"fr\"]},"
                           "{\"code\":\"de\",\"name\":\"German\",\"targets\":[\"en\",\"fr\"]},"
                           "{\"code\":\"fr\",\"name\":\"French\",\"targets\":[]},"
                           "{\"code\":\"ar\",\"name\":\"Arabic\",\"targets\":[\"en\",\"de\",\"fr\"]}]");
    free(text);
    const char *sources[NMT_SERVE_MAX_MODELS];
    ck_assert_int_eq(nmt_serve_route_sources(pairs, N, sources), 3);
    ck_assert_str_eq(sources[0], "en");
    ck_assert_str_eq(sources[1], "de");
    ck_assert_str_eq(sources[2], "ar");
}
END_TEST

START_TEST(test_requests) {
    char *q[] = {"Ein Mann in einem blauen Hemd steht auf einer Leiter und putzt die Fenster des Hauses."};
    nmt_serve_request r = {.api = NMT_SERVE_OPENNMT, .q = q, .count = 1, .model = 2};
    nmt_serve_route route;
    nmt_langid_guess guess;
    int detected;
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), 0);
    ck_assert_int_eq(route.first, 2);
    r.model = 4;
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "id 4: no such model (the ids are 0 to 3"));
    ck_assert_int_eq(nmt_serve_route_request(pairs, 1, &r, &route, &guess, &detected), 0); /* one model: any id */
    ck_assert_int_eq(route.first, 0);
    r = (nmt_serve_request){.api = NMT_SERVE_LIBRE, .q = q, .count = 1, .source = "auto", .target = "fr", .model = -1};
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), 0);
    ck_assert_int_eq(detected, 1);
    ck_assert_str_eq(guess.language, "de");
    ck_assert(guess.confidence > 50);
    ck_assert(route.first == 1 && route.second == 2);
    /* French is no source here: the best served language CLD2 scored, else the first source. */
    char *french[] = {"Un homme en chemise bleue est debout sur une échelle et nettoie les fenêtres."};
    nmt_langid_guess guesses[NMT_SERVE_MAX_MODELS];
    ck_assert_int_eq(nmt_serve_route_detect(pairs, N, (const char *const *)french, 1, guesses), 3);
    ck_assert_str_eq(guesses[0].language, "en");
    r = (nmt_serve_request){.api = NMT_SERVE_NATIVE, .q = q, .count = 1, .source = "de", .target = "fr", .alignment = 1};
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), -1);
    ck_assert_ptr_nonnull(strstr(nmt_error(), "alignment: not available"));
    r.source = NULL;
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), -1);
    ck_assert_str_eq(nmt_error(), "source: missing (give source and target, or neither for the first model)");
    r.target = NULL;
    ck_assert_int_eq(nmt_serve_route_request(pairs, N, &r, &route, &guess, &detected), 0);
    ck_assert_int_eq(route.first, 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("routes");
    TCase *tc = tcase_create("routes");
    tcase_add_test(tc, test_find);
    tcase_add_test(tc, test_languages);
    tcase_add_test(tc, test_requests);
    suite_add_tcase(s, tc);
    return nmt_test_run(s);
}
