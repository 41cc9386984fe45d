/* langcode: ISO 639-1's list with English names, and the shape of a code (see langcode.h). */
#include "text/langcode.h"

#include "base/util.h"

#include <string.h>

/* ISO 639-1, sorted by code (Debian's iso-codes, names shortened to their common form). */
static const char *const languages[][2] = {
    {"aa", "Afar"}, {"ab", "Abkhazian"}, {"ae", "Avestan"}, {"af", "Afrikaans"}, {"ak", "Akan"}, {"am", "Amharic"},
    {"an", "Aragonese"}, {"ar", "Arabic"}, {"as", "Assamese"}, {"av", "Avaric"}, {"ay", "Aymara"},
    {"az", "Azerbaijani"}, {"ba", "Bashkir"}, {"be", "Belarusian"}, {"bg", "Bulgarian"}, {"bh", "Bihari languages"},
    {"bi", "Bislama"}, {"bm", "Bambara"}, {"bn", "Bangla"}, {"bo", "Tibetan"}, {"br", "Breton"}, {"bs", "Bosnian"},
    {"ca", "Catalan"}, {"ce", "Chechen"}, {"ch", "Chamorro"}, {"co", "Corsican"}, {"cr", "Cree"}, {"cs", "Czech"},
    {"cu", "Church Slavic"}, {"cv", "Chuvash"}, {"cy", "Welsh"}, {"da", "Danish"}, {"de", "German"},
    {"dv", "Divehi"}, {"dz", "Dzongkha"}, {"ee", "Ewe"}, {"el", "Greek"}, {"en", "English"}, {"eo", "Esperanto"},
    {"es", "Spanish"}, {"et", "Estonian"}, {"eu", "Basque"}, {"fa", "Persian"}, {"ff", "Fulah"}, {"fi", "Finnish"},
    {"fj", "Fijian"}, {"fo", "Faroese"}, {"fr", "French"}, {"fy", "Western Frisian"}, {"ga", "Irish"},
    {"gd", "Gaelic"}, {"gl", "Galician"}, {"gn", "Guarani"}, {"gu", "Gujarati"}, {"gv", "Manx"}, {"ha", "Hausa"},
    {"he", "Hebrew"}, {"hi", "Hindi"}, {"ho", "Hiri Motu"}, {"hr", "Croatian"}, {"ht", "Haitian"},
    {"hu", "Hungarian"}, {"hy", "Armenian"}, {"hz", "Herero"}, {"ia", "Interlingua"}, {"id", "Indonesian"},
    {"ie", "Interlingue"}, {"ig", "Igbo"}, {"ii", "Sichuan Yi"}, {"ik", "Inupiaq"}, {"io", "Ido"},
    {"is", "Icelandic"}, {"it", "Italian"}, {"iu", "Inuktitut"}, {"ja", "Japanese"}, {"jv", "Javanese"},
    {"ka", "Georgian"}, {"kg", "Kongo"}, {"ki", "Kikuyu"}, {"kj", "Kuanyama"}, {"kk", "Kazakh"},
    {"kl", "Kalaallisut"}, {"km", "Central Khmer"}, {"kn", "Kannada"}, {"ko", "Korean"}, {"kr", "Kanuri"},
    {"ks", "Kashmiri"}, {"ku", "Kurdish"}, {"kv", "Komi"}, {"kw", "Cornish"}, {"ky", "Kirghiz"}, {"la", "Latin"},
    {"lb", "Luxembourgish"}, {"lg", "Ganda"}, {"li", "Limburgan"}, {"ln", "Lingala"}, {"lo", "Lao"},
    {"lt", "Lithuanian"}, {"lu", "Luba-Katanga"}, {"lv", "Latvian"}, {"mg", "Malagasy"}, {"mh", "Marshallese"},
    {"mi", "Maori"}, {"mk", "Macedonian"}, {"ml", "Malayalam"}, {"mn", "Mongolian"}, {"mr", "Marathi"},
    {"ms", "Malay"}, {"mt", "Maltese"}, {"my", "Burmese"}, {"na", "Nauru"}, {"nb", "Norwegian Bokmål"},
    {"nd", "North Ndebele"}, {"ne", "Nepali"}, {"ng", "Ndonga"}, {"nl", "Dutch"}, {"nn", "Norwegian Nynorsk"},
    {"no", "Norwegian"}, {"nr", "South Ndebele"}, {"nv", "Navajo"}, {"ny", "Chichewa"}, {"oc", "Occitan"},
    {"oj", "Ojibwa"}, {"om", "Oromo"}, {"or", "Oriya"}, {"os", "Ossetian"}, {"pa", "Panjabi"}, {"pi", "Pali"},
    {"pl", "Polish"}, {"ps", "Pushto"}, {"pt", "Portuguese"}, {"qu", "Quechua"}, {"rm", "Romansh"}, {"rn", "Rundi"},
    {"ro", "Romanian"}, {"ru", "Russian"}, {"rw", "Kinyarwanda"}, {"sa", "Sanskrit"}, {"sc", "Sardinian"},
    {"sd", "Sindhi"}, {"se", "Northern Sami"}, {"sg", "Sango"}, {"si", "Sinhala"}, {"sk", "Slovak"},
    {"sl", "Slovenian"}, {"sm", "Samoan"}, {"sn", "Shona"}, {"so", "Somali"}, {"sq", "Albanian"}, {"sr", "Serbian"},
    {"ss", "Swati"}, {"st", "Southern Sotho"}, {"su", "Sundanese"}, {"sv", "Swedish"}, {"sw", "Swahili"},
    {"ta", "Tamil"}, {"te", "Telugu"}, {"tg", "Tajik"}, {"th", "Thai"}, {"ti", "Tigrinya"}, {"tk", "Turkmen"},
    {"tl", "Tagalog"}, {"tn", "Tswana"}, {"to", "Tongan"}, {"tr", "Turkish"}, {"ts", "Tsonga"}, {"tt", "Tatar"},
    {"tw", "Twi"}, {"ty", "Tahitian"}, {"ug", "Uighur"}, {"uk", "Ukrainian"}, {"ur", "Urdu"}, {"uz", "Uzbek"},
    {"ve", "Venda"}, {"vi", "Vietnamese"}, {"vo", "Volapük"}, {"wa", "Walloon"}, {"wo", "Wolof"}, {"xh", "Xhosa"},
    {"yi", "Yiddish"}, {"yo", "Yoruba"}, {"za", "Zhuang"}, {"zh", "Chinese"}, {"zt", "Chinese (traditional)"},
    {"zu", "Zulu"},
};

enum { LANGUAGE_COUNT = sizeof languages / sizeof languages[0] };

static int lower(char c) { return c >= 'a' && c <= 'z'; }
static int alnum(char c) { return lower(c) || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* The listed entry whose code is code[0..len), or -1. */
static int find(const char *code, size_t len) {
    if (len != 2) return -1;
    int lo = 0, hi = LANGUAGE_COUNT - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        const int c = strncmp(languages[mid][0], code, 2);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Letters of the primary subtag (before any '-'). */
static size_t primary_length(const char *code) {
    size_t n = 0;
    while (code[n] && code[n] != '-') n++;
    return n;
}

int nmt_langcode_check(const char *code, const char *what) {
    const size_t n = primary_length(code), total = strlen(code);
    int ok = (n == 2 && find(code, 2) >= 0) || (n == 3 && lower(code[0]) && lower(code[1]) && lower(code[2]));
    if (ok && code[n] == '-') {
        const size_t sub = total - n - 1;
        ok = sub >= 2 && sub <= 8 && total < NMT_LANGCODE_MAX;
        for (size_t i = n + 1; ok && i < total; i++) ok = alnum(code[i]);
    }
    if (ok) return 0;
    return nmt_error_set("%s: '%.40s' is not a language code (ISO 639-1 such as \"en\", or ISO 639-3 such as "
                         "\"eng\", optionally with a subtag such as \"zh-Hans\")",
                         what, code);
}

int nmt_langcode_is_iso639_1(const char *code) { return strlen(code) == 2 && find(code, 2) >= 0; }

int nmt_langcode_of_path(const char *path, char out[NMT_LANGCODE_MAX]) {
    out[0] = '\0';
    if (!path) return 0;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    size_t end = strlen(name);
    if (end > 3 && strcmp(name + end - 3, ".gz") == 0) end -= 3; /* a gzip corpus: train.en.gz */
    if (end < 3 || name[end - 3] != '.') return 0;
    const char code[3] = {name[end - 2], name[end - 1], '\0'};
    if (!nmt_langcode_is_iso639_1(code)) return 0;
    memcpy(out, code, 3);
    return 1;
}

const char *nmt_langcode_name(const char *code) {
    const int i = find(code, primary_length(code));
    return i >= 0 ? languages[i][1] : code;
}
