/* langid: the extern "C" shim over CLD2 (rules in langid.h). Nothing C++ crosses the boundary: every
 * entry point catches every exception and turns it into nmt_error_set(). */
extern "C" {
#include "text/langid.h"
#include "base/utf8.h"
#include "base/util.h"
}

#include <cstdio> /* before CLD2's header, which uses FILE without including it */

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>

#include <cstring>
#include <exception>
#include <strings.h>

namespace {

/* LibreTranslate's code for CLD2's code of the same language. */
const char *libre_code(const char *cld) {
    static const char *const renamed[][2] = {{"iw", "he"}, {"jw", "jv"}, {"no", "nb"}, {"zh-Hant", "zt"}};
    for (const auto &r : renamed)
        if (std::strcmp(cld, r[0]) == 0) return r[1];
    return cld;
}

/* CLD2's candidates for text[0..len): up to 3, best first; returns how many. */
int candidates(const char *text, size_t len, nmt_langid_guess *out) {
    /* CLD2 reads whole characters: cut the text at a character boundary below the limit. */
    if (len > NMT_LANGID_MAX_BYTES) {
        len = NMT_LANGID_MAX_BYTES;
        while (len > 0 && (static_cast<unsigned char>(text[len]) & 0xC0) == 0x80) len--;
    }
    CLD2::CLDHints hints = {nullptr, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    CLD2::Language language3[3];
    int percent3[3], text_bytes = 0, valid_prefix = 0;
    double normalized3[3];
    bool reliable = false;
    CLD2::ExtDetectLanguageSummaryCheckUTF8(text, static_cast<int>(len), true, &hints, CLD2::kCLDFlagBestEffort,
                                            language3, percent3, normalized3, nullptr, &text_bytes, &reliable,
                                            &valid_prefix);
    int n = 0;
    for (int k = 0; k < 3; k++) {
        if (language3[k] == CLD2::UNKNOWN_LANGUAGE || language3[k] == CLD2::TG_UNKNOWN_LANGUAGE || percent3[k] <= 0)
            continue;
        const char *code = libre_code(CLD2::LanguageCode(language3[k]));
        if (std::strlen(code) >= sizeof out[n].language) continue;
        std::strcpy(out[n].language, code);
        out[n].confidence = reliable ? percent3[k] : percent3[k] / 2.0;
        n++;
    }
    return n;
}

int detect(const char *text, size_t len, const char *const *set, int n_set, nmt_langid_guess *out) {
    const long bad = nmt_utf8_invalid_at(text, len);
    if (bad >= 0) return nmt_error_set("text: invalid UTF-8 at byte %ld", bad);
    for (int i = 0; set && i < n_set; i++)
        if (std::strlen(set[i]) >= sizeof out[0].language)
            return nmt_error_set("language %d: '%.16s' is not a language code", i + 1, set[i]);
    nmt_langid_guess found[3];
    const int n = candidates(text, len, found);
    if (!set) {
        std::memcpy(out, found, static_cast<size_t>(n) * sizeof *found);
        return n;
    }
    /* The set's languages CLD2 found, best first (its order), then the rest with 0. */
    int count = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n_set; i++)
            if (strcasecmp(found[k].language, set[i]) == 0) {
                std::strcpy(out[count].language, set[i]);
                out[count++].confidence = found[k].confidence;
                break;
            }
    for (int i = 0; i < n_set; i++) {
        int listed = 0;
        for (int k = 0; k < count && !listed; k++) listed = strcasecmp(out[k].language, set[i]) == 0;
        if (listed) continue;
        std::strcpy(out[count].language, set[i]);
        out[count++].confidence = 0;
    }
    return count;
}

} // namespace

extern "C" int nmt_langid_detect(const char *text, size_t len, const char *const *set, int n_set,
                                 nmt_langid_guess *out) {
    try {
        return detect(text, len, set, n_set, out);
    } catch (const std::exception &e) {
        return nmt_error_set("language detection: %s", e.what());
    } catch (...) {
        return nmt_error_set("language detection failed");
    }
}
