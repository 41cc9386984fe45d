/* en_hi_lexicon: the words of the demo English→Hindi corpus (read by corpora/en-hi/gen_en_hi.c only).
 *
 * Every entry gives the English forms that English grammar cannot derive and the Hindi lemma with
 * its gender; the generator derives the Hindi inflections (oblique, plural, participles, future) by
 * rule, and an entry lists a form only where Hindi is irregular (जा → गया, दे → दूँगा, नया → नई, राजा
 * that keeps its -ā). Semantic masks (S_*) say which roles a noun can play so that sentences make
 * sense ("drink tea", not "drink a chair"); they never change how a sentence is translated.
 *
 * Spelling: modern standard Hindi (गए, लिए, नई), nukta letters written as the letter plus U+093C
 * (NFC), चंद्रबिंदु where the vowel sign leaves room for it (हूँ, माँ), बिंदु otherwise (हैं, में).
 */
#ifndef NMT_EN_HI_LEXICON_H
#define NMT_EN_HI_LEXICON_H

/* Number as Hindi agreement sees it: तुम and आप agree as plurals but take their own auxiliary
 * (हो, हैं), and an honorific noun (पिताजी) agrees as a plural while English treats it as singular. */
enum { NUM_SG, NUM_PL, NUM_TUM, NUM_AP, NUM_HON };

typedef struct en_hi_pronoun {
    const char *en, *en_obj, *en_poss; /* I, me, my */
    const char *hi;     /* direct: मैं */
    const char *hi_erg; /* with ने: मैंने */
    const char *hi_dat; /* with को: मुझे */
    const char *hi_se;  /* with से: मुझसे */
    const char *hi_gen; /* genitive in -ā, agreeing with the possessed: मेरा */
    int person, number;
    char g;             /* 'm' or 'f'; I, you, we, they are masculine unless a vocative says otherwise */
} en_hi_pronoun;

enum { PRON_I, PRON_TUM, PRON_AP, PRON_HE, PRON_SHE, PRON_WE, PRON_THEY, PRON_COUNT };

static const en_hi_pronoun en_hi_pronouns[PRON_COUNT] = {
    {"I", "me", "my", "मैं", "मैंने", "मुझे", "मुझसे", "मेरा", 1, NUM_SG, 'm'},
    {"you", "you", "your", "तुम", "तुमने", "तुम्हें", "तुमसे", "तुम्हारा", 2, NUM_TUM, 'm'},
    {"you", "you", "your", "आप", "आपने", "आपको", "आपसे", "आपका", 2, NUM_AP, 'm'},
    {"he", "him", "his", "वह", "उसने", "उसे", "उससे", "उसका", 3, NUM_SG, 'm'},
    {"she", "her", "her", "वह", "उसने", "उसे", "उससे", "उसका", 3, NUM_SG, 'f'},
    {"we", "us", "our", "हम", "हमने", "हमें", "हमसे", "हमारा", 1, NUM_PL, 'm'},
    {"they", "them", "their", "वे", "उन्होंने", "उन्हें", "उनसे", "उनका", 3, NUM_PL, 'm'},
};

/* Roles a noun can play (en_hi_noun.sem). */
enum {
    S_HUM = 1u << 0,    /* person: subject of most verbs */
    S_ANI = 1u << 1,    /* animal */
    S_DRINK = 1u << 2,  /* drink X */
    S_FOOD = 1u << 3,   /* eat X */
    S_FODDER = 1u << 4, /* what animals eat or drink (grass only by them) */
    S_DISH = 1u << 5,   /* make X */
    S_COOK = 1u << 6,   /* cook X */
    S_READ = 1u << 7,   /* read X */
    S_WRITE = 1u << 8,  /* write X */
    S_BUY = 1u << 9,    /* buy, sell, give, bring X */
    S_WASH = 1u << 10,  /* wash X */
    S_OPEN = 1u << 11,  /* open, close X */
    S_CLEAN = 1u << 12, /* clean X */
    S_SEE = 1u << 13,   /* see X (inanimate) */
    S_SHOW = 1u << 14,  /* watch X */
    S_LANG = 1u << 15,  /* learn X */
    S_SPEAK = 1u << 16, /* speak X */
    S_GAME = 1u << 17,  /* play X */
    S_SONG = 1u << 18,  /* sing X */
    S_KITE = 1u << 19,  /* fly X */
    S_SEND = 1u << 20,  /* send or show X to someone */
    S_PET = 1u << 21,   /* an animal one has */
    S_HAVE = 1u << 22,  /* a thing one has */
    S_LIKE = 1u << 23,  /* like X */
    S_LOC = 1u << 24,   /* a small thing that lies somewhere: "the key is under the bed" */
    S_KIN = 1u << 25,   /* a relative or friend: always said with a possessor ("my sister") */
};

/* Noun flags. */
enum {
    N_MASS = 1u << 0,   /* no article, no plural: tea, rice, Hindi, cricket */
    N_PLONLY = 1u << 1, /* plural only: clothes, dishes */
    N_NOPL = 1u << 2,   /* singular only: mother, kitchen */
    N_HON = 1u << 3,    /* honorific: agrees as a plural (मेरे पिताजी आते हैं) */
    N_PROPER = 1u << 4, /* English capitalised, never takes "the": Hindi, English */
};

/* Which adjectives fit a noun (en_hi_noun.adj, en_hi_adj.fits). */
enum {
    A_HUM = 1u << 0,
    A_ANI = 1u << 1,
    A_EAT = 1u << 2,    /* food and drink */
    A_OBJ = 1u << 3,    /* things */
    A_PLACE = 1u << 4,  /* rooms and houses */
    A_PLANT = 1u << 5,
    A_WORK = 1u << 6,   /* books, stories, films */
    A_NONE = 0,
};

/* Relations of the location frame (en_hi_noun.rel): "the cat is under the bed". */
enum {
    R_IN = 1u << 0,
    R_ON = 1u << 1,
    R_UNDER = 1u << 2,
    R_NEAR = 1u << 3,
    R_BEHIND = 1u << 4,
    R_FRONT = 1u << 5,
    R_COUNT = 6,
};

typedef struct en_hi_relation {
    const char *en;     /* "under" */
    const char *hi;     /* postposition after the oblique noun: "के नीचे" */
} en_hi_relation;

static const en_hi_relation en_hi_relations[R_COUNT] = {
    {"in", "में"}, {"on", "पर"}, {"under", "के नीचे"},
    {"near", "के पास"}, {"behind", "के पीछे"}, {"in front of", "के सामने"},
};

typedef struct en_hi_noun {
    const char *en, *en_pl; /* English singular, plural */
    const char *hi;         /* Hindi direct singular */
    char g;                 /* 'm' or 'f' */
    unsigned flags;         /* N_* */
    unsigned sem;           /* S_* */
    unsigned adj;           /* A_* class */
    unsigned rel;           /* R_* relations it allows as a reference object (0: not one) */
    const char *forms[4];   /* irregular Hindi forms: direct sg, oblique sg, direct pl, oblique pl */
} en_hi_noun;

#define HUMAN (S_HUM)
#define ANIMAL (S_ANI | S_LOC | S_LIKE)

static const en_hi_noun en_hi_nouns[] = {
    /* people */
    {"boy", "boys", "लड़का", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"girl", "girls", "लड़की", 'f', 0, HUMAN, A_HUM, 0, {0}},
    {"man", "men", "आदमी", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"woman", "women", "औरत", 'f', 0, HUMAN, A_HUM, 0, {0}},
    {"child", "children", "बच्चा", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"teacher", "teachers", "अध्यापक", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"doctor", "doctors", "डॉक्टर", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"student", "students", "छात्र", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"farmer", "farmers", "किसान", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"king", "kings", "राजा", 'm', 0, HUMAN, A_HUM, 0, {"राजा", "राजा", "राजा", "राजाओं"}},
    {"queen", "queens", "रानी", 'f', 0, HUMAN, A_HUM, 0, {0}},
    {"shopkeeper", "shopkeepers", "दुकानदार", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"driver", "drivers", "ड्राइवर", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"guest", "guests", "मेहमान", 'm', 0, HUMAN, A_HUM, 0, {0}},
    {"brother", "brothers", "भाई", 'm', 0, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"sister", "sisters", "बहन", 'f', 0, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"son", "sons", "बेटा", 'm', 0, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"daughter", "daughters", "बेटी", 'f', 0, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"friend", "friends", "दोस्त", 'm', 0, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"mother", 0, "माँ", 'f', N_NOPL, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"father", 0, "पिताजी", 'm', N_NOPL | N_HON, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"grandfather", 0, "दादाजी", 'm', N_NOPL | N_HON, HUMAN | S_KIN, A_HUM, 0, {0}},
    {"grandmother", 0, "दादीजी", 'f', N_NOPL | N_HON, HUMAN | S_KIN, A_HUM, 0, {0}},
    /* animals */
    {"dog", "dogs", "कुत्ता", 'm', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"cat", "cats", "बिल्ली", 'f', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"cow", "cows", "गाय", 'f', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"horse", "horses", "घोड़ा", 'm', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"goat", "goats", "बकरी", 'f', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"parrot", "parrots", "तोता", 'm', 0, ANIMAL | S_PET, A_ANI, 0, {0}},
    {"bird", "birds", "चिड़िया", 'f', 0, ANIMAL | S_SEE, A_ANI, 0, {0}},
    {"monkey", "monkeys", "बंदर", 'm', 0, ANIMAL, A_ANI, 0, {0}},
    {"elephant", "elephants", "हाथी", 'm', 0, ANIMAL, A_ANI, 0, {0}},
    /* food */
    {"apple", "apples", "सेब", 'm', 0, S_FOOD | S_BUY | S_LIKE | S_LOC, A_EAT, 0, {0}},
    {"mango", "mangoes", "आम", 'm', 0, S_FOOD | S_BUY | S_LIKE, A_EAT, 0, {0}},
    {"banana", "bananas", "केला", 'm', 0, S_FOOD | S_BUY | S_LIKE | S_FODDER, A_EAT, 0, {0}},
    {"orange", "oranges", "संतरा", 'm', 0, S_FOOD | S_BUY | S_LIKE, A_EAT, 0, {0}},
    {"egg", "eggs", "अंडा", 'm', 0, S_FOOD | S_BUY | S_COOK, A_EAT, 0, {0}},
    {"potato", "potatoes", "आलू", 'm', 0, S_FOOD | S_BUY | S_COOK | S_LIKE, A_EAT, 0, {0}},
    {"roti", "rotis", "रोटी", 'f', 0, S_FOOD | S_DISH | S_LIKE, A_EAT, 0, {0}},
    {"biscuit", "biscuits", "बिस्कुट", 'm', 0, S_FOOD | S_BUY | S_LIKE, A_EAT, 0, {0}},
    {"cake", "cakes", "केक", 'm', 0, S_FOOD | S_DISH | S_BUY | S_LIKE, A_EAT, 0, {0}},
    {"rice", 0, "चावल", 'm', N_MASS, S_FOOD | S_COOK | S_LIKE, A_EAT, 0, {0}},
    {"food", 0, "खाना", 'm', N_MASS, S_FOOD | S_COOK | S_DISH | S_FODDER, A_EAT, 0, {0}},
    {"fish", 0, "मछली", 'f', N_MASS, S_FOOD | S_COOK | S_LIKE, A_EAT, 0, {0}},
    {"grass", 0, "घास", 'f', N_MASS, S_FODDER, A_PLANT, 0, {0}},
    /* drinks */
    {"tea", 0, "चाय", 'f', N_MASS, S_DRINK | S_DISH | S_LIKE, A_EAT, 0, {0}},
    {"coffee", 0, "कॉफ़ी", 'f', N_MASS, S_DRINK | S_DISH | S_LIKE, A_EAT, 0, {0}},
    {"water", 0, "पानी", 'm', N_MASS, S_DRINK | S_FODDER, A_EAT, 0, {0}},
    {"milk", 0, "दूध", 'm', N_MASS, S_DRINK | S_LIKE | S_FODDER, A_EAT, 0, {0}},
    {"juice", 0, "जूस", 'm', N_MASS, S_DRINK | S_DISH | S_LIKE, A_EAT, 0, {0}},
    {"lassi", 0, "लस्सी", 'f', N_MASS, S_DRINK | S_DISH | S_LIKE, A_EAT, 0, {0}},
    /* writing */
    {"book", "books", "किताब", 'f', 0, S_READ | S_WRITE | S_BUY | S_SEND | S_HAVE | S_LOC | S_LIKE | S_OPEN, A_WORK, 0, {0}},
    {"newspaper", "newspapers", "अख़बार", 'm', 0, S_READ | S_BUY | S_LOC, A_WORK, 0, {0}},
    {"letter", "letters", "चिट्ठी", 'f', 0, S_READ | S_WRITE | S_SEND | S_LOC, A_WORK, 0, {0}},
    {"story", "stories", "कहानी", 'f', 0, S_READ | S_WRITE | S_LIKE, A_WORK, 0, {0}},
    {"poem", "poems", "कविता", 'f', 0, S_READ | S_WRITE | S_LIKE, A_WORK, 0, {0}},
    /* things */
    {"pen", "pens", "कलम", 'f', 0, S_BUY | S_HAVE | S_LOC | S_SEND, A_OBJ, 0, {0}},
    {"car", "cars", "गाड़ी", 'f', 0, S_BUY | S_HAVE | S_WASH | S_CLEAN | S_SEE, A_OBJ,
     R_IN | R_UNDER | R_NEAR | R_BEHIND | R_FRONT, {0}},
    {"bicycle", "bicycles", "साइकिल", 'f', 0, S_BUY | S_HAVE | S_WASH | S_SEE, A_OBJ, R_NEAR | R_BEHIND, {0}},
    {"ball", "balls", "गेंद", 'f', 0, S_BUY | S_HAVE | S_LOC | S_SEND, A_OBJ, 0, {0}},
    {"bag", "bags", "थैला", 'm', 0, S_BUY | S_HAVE | S_LOC | S_OPEN, A_OBJ, R_IN | R_NEAR, {0}},
    {"umbrella", "umbrellas", "छाता", 'm', 0, S_BUY | S_HAVE | S_LOC | S_OPEN, A_OBJ, 0, {0}},
    {"shirt", "shirts", "कमीज़", 'f', 0, S_BUY | S_HAVE | S_WASH | S_LIKE | S_SEND, A_OBJ, 0, {0}},
    {"watch", "watches", "घड़ी", 'f', 0, S_BUY | S_HAVE | S_LOC | S_SEND, A_OBJ, 0, {0}},
    {"toy", "toys", "खिलौना", 'm', 0, S_BUY | S_HAVE | S_LOC | S_SEND, A_OBJ, 0, {0}},
    {"phone", "phones", "फ़ोन", 'm', 0, S_BUY | S_HAVE | S_LOC, A_OBJ, 0, {0}},
    {"key", "keys", "चाबी", 'f', 0, S_HAVE | S_LOC, A_OBJ, 0, {0}},
    {"cup", "cups", "कप", 'm', 0, S_BUY | S_WASH | S_LOC, A_OBJ, 0, {0}},
    {"shoe", "shoes", "जूता", 'm', 0, S_BUY | S_LOC | S_WASH, A_OBJ, 0, {0}},
    {"kite", "kites", "पतंग", 'f', 0, S_KITE | S_BUY | S_HAVE | S_SEE, A_OBJ, 0, {0}},
    {"flower", "flowers", "फूल", 'm', 0, S_SEE | S_LIKE | S_BUY | S_SEND, A_PLANT, 0, {0}},
    {"picture", "pictures", "तस्वीर", 'f', 0, S_SEE | S_SEND | S_LIKE | S_BUY, A_OBJ, 0, {0}},
    {0, "clothes", "कपड़ा", 'm', N_PLONLY, S_WASH | S_BUY, A_OBJ, 0, {0}},
    {0, "dishes", "बर्तन", 'm', N_PLONLY, S_WASH, A_OBJ, 0, {0}},
    {"box", "boxes", "डिब्बा", 'm', 0, S_OPEN | S_BUY, A_OBJ, R_IN | R_ON | R_NEAR | R_BEHIND, {0}},
    {"table", "tables", "मेज़", 'f', 0, S_CLEAN | S_BUY, A_OBJ, R_ON | R_UNDER | R_NEAR | R_BEHIND, {0}},
    {"chair", "chairs", "कुर्सी", 'f', 0, S_CLEAN | S_BUY, A_OBJ, R_ON | R_UNDER | R_NEAR | R_BEHIND, {0}},
    {"bed", "beds", "पलंग", 'm', 0, S_CLEAN | S_BUY, A_OBJ, R_ON | R_UNDER | R_NEAR, {0}},
    {"cupboard", "cupboards", "अलमारी", 'f', 0, S_OPEN | S_CLEAN, A_OBJ, R_IN | R_ON | R_NEAR | R_BEHIND, {0}},
    /* parts of a house */
    {"door", "doors", "दरवाज़ा", 'm', 0, S_OPEN | S_CLEAN, A_OBJ, R_NEAR | R_BEHIND, {0}},
    {"window", "windows", "खिड़की", 'f', 0, S_OPEN | S_CLEAN, A_OBJ, R_NEAR, {0}},
    {"room", "rooms", "कमरा", 'm', 0, S_CLEAN, A_PLACE, R_IN, {0}},
    {"house", "houses", "घर", 'm', 0, S_CLEAN | S_SEE | S_BUY | S_HAVE, A_PLACE, R_IN | R_NEAR | R_BEHIND | R_FRONT, {0}},
    {"kitchen", 0, "रसोई", 'f', N_NOPL, S_CLEAN, A_PLACE, R_IN, {0}},
    {"shop", "shops", "दुकान", 'f', 0, S_OPEN | S_CLEAN | S_SEE, A_PLACE, R_IN | R_NEAR | R_FRONT, {0}},
    {"tree", "trees", "पेड़", 'm', 0, S_SEE, A_PLANT, R_ON | R_UNDER | R_NEAR | R_BEHIND, {0}},
    /* things to watch, learn, play, sing */
    {"film", "films", "फ़िल्म", 'f', 0, S_SHOW | S_LIKE, A_WORK, 0, {0}},
    {"match", "matches", "मैच", 'm', 0, S_SHOW, A_WORK, 0, {0}},
    {"TV", 0, "टीवी", 'm', N_MASS | N_PROPER, S_SHOW, A_NONE, 0, {0}},
    {"Hindi", 0, "हिंदी", 'f', N_MASS | N_PROPER, S_LANG | S_SPEAK | S_LIKE, A_NONE, 0, {0}},
    {"English", 0, "अंग्रेज़ी", 'f', N_MASS | N_PROPER, S_LANG | S_SPEAK | S_LIKE, A_NONE, 0, {0}},
    {"music", 0, "संगीत", 'm', N_MASS, S_LANG | S_LIKE, A_NONE, 0, {0}},
    {"cricket", 0, "क्रिकेट", 'm', N_MASS, S_GAME | S_LIKE, A_NONE, 0, {0}},
    {"football", 0, "फ़ुटबॉल", 'm', N_MASS, S_GAME | S_LIKE, A_NONE, 0, {0}},
    {"hockey", 0, "हॉकी", 'f', N_MASS, S_GAME | S_LIKE, A_NONE, 0, {0}},
    {"chess", 0, "शतरंज", 'f', N_MASS, S_GAME | S_LIKE, A_NONE, 0, {0}},
    {"song", "songs", "गाना", 'm', 0, S_SONG | S_LIKE, A_WORK, 0, {0}},
};

typedef struct en_hi_name {
    const char *en, *hi;
    char g;
} en_hi_name;

static const en_hi_name en_hi_names[] = {
    {"Ram", "राम", 'm'},     {"Ravi", "रवि", 'm'},     {"Amit", "अमित", 'm'},     {"Rahul", "राहुल", 'm'},
    {"Arjun", "अर्जुन", 'm'}, {"Mohan", "मोहन", 'm'},  {"Vikram", "विक्रम", 'm'}, {"Sunil", "सुनील", 'm'},
    {"Sita", "सीता", 'f'},   {"Priya", "प्रिया", 'f'}, {"Anita", "अनीता", 'f'},  {"Meera", "मीरा", 'f'},
    {"Neha", "नेहा", 'f'},   {"Pooja", "पूजा", 'f'},   {"Asha", "आशा", 'f'},     {"Radha", "राधा", 'f'},
};

typedef struct en_hi_adj {
    const char *en;
    const char *hi;         /* lemma (masculine direct singular) */
    int variable;           /* 1: ends in -ā and agrees (अच्छा/अच्छी/अच्छे); 0: invariant (सुंदर) */
    unsigned fits;          /* A_* classes it describes */
    const char *hi_animate; /* a different word for people and animals ("old": बूढ़ा, not पुराना) */
    const char *forms[3];   /* irregular: masculine direct sg, masculine oblique/plural, feminine */
} en_hi_adj;

static const en_hi_adj en_hi_adjs[] = {
    {"good", "अच्छा", 1, A_HUM | A_ANI | A_EAT | A_OBJ | A_PLACE | A_WORK, 0, {0}},
    {"bad", "बुरा", 1, A_HUM | A_EAT | A_WORK, 0, {0}},
    {"big", "बड़ा", 1, A_ANI | A_OBJ | A_PLACE | A_PLANT, 0, {0}},
    {"small", "छोटा", 1, A_HUM | A_ANI | A_OBJ | A_PLACE | A_PLANT, 0, {0}},
    {"tall", "लंबा", 1, A_HUM | A_PLANT, 0, {0}},
    {"long", "लंबा", 1, A_WORK, 0, {0}},
    {"new", "नया", 1, A_OBJ | A_PLACE | A_WORK, 0, {"नया", "नए", "नई"}},
    {"old", "पुराना", 1, A_HUM | A_ANI | A_OBJ | A_PLACE | A_WORK, "बूढ़ा", {0}},
    {"young", "जवान", 0, A_HUM, 0, {0}},
    {"beautiful", "सुंदर", 0, A_HUM | A_ANI | A_OBJ | A_PLACE | A_PLANT, 0, {0}},
    {"happy", "ख़ुश", 0, A_HUM | A_ANI, 0, {0}},
    {"sad", "उदास", 0, A_HUM, 0, {0}},
    {"hungry", "भूखा", 1, A_HUM | A_ANI, 0, {0}},
    {"thirsty", "प्यासा", 1, A_HUM | A_ANI, 0, {0}},
    {"busy", "व्यस्त", 0, A_HUM, 0, {0}},
    {"clever", "होशियार", 0, A_HUM | A_ANI, 0, {0}},
    {"lazy", "आलसी", 0, A_HUM | A_ANI, 0, {0}},
    {"angry", "नाराज़", 0, A_HUM, 0, {0}},
    {"rich", "अमीर", 0, A_HUM, 0, {0}},
    {"poor", "ग़रीब", 0, A_HUM, 0, {0}},
    {"strong", "मज़बूत", 0, A_HUM | A_OBJ, 0, {0}},
    {"weak", "कमज़ोर", 0, A_HUM | A_ANI, 0, {0}},
    {"hot", "गरम", 0, A_EAT, 0, {0}},
    {"cold", "ठंडा", 1, A_EAT, 0, {0}},
    {"sweet", "मीठा", 1, A_EAT, 0, {0}},
    {"tasty", "स्वादिष्ट", 0, A_EAT, 0, {0}},
    {"fresh", "ताज़ा", 1, A_EAT | A_PLANT, 0, {0}},
    {"red", "लाल", 0, A_OBJ, 0, {0}},
    {"black", "काला", 1, A_OBJ | A_ANI, 0, {0}},
    {"white", "सफ़ेद", 0, A_OBJ | A_ANI, 0, {0}},
    {"green", "हरा", 1, A_OBJ | A_PLANT, 0, {0}},
    {"blue", "नीला", 1, A_OBJ, 0, {0}},
    {"yellow", "पीला", 1, A_OBJ, 0, {0}},
    {"clean", "साफ़", 0, A_OBJ | A_PLACE | A_ANI, 0, {0}},
    {"dirty", "गंदा", 1, A_OBJ | A_PLACE | A_ANI, 0, {0}},
    {"expensive", "महँगा", 1, A_OBJ | A_PLACE, 0, {0}},
    {"cheap", "सस्ता", 1, A_OBJ, 0, {0}},
    {"heavy", "भारी", 0, A_OBJ, 0, {0}},
    {"interesting", "दिलचस्प", 0, A_WORK, 0, {0}},
};

/* How a verb takes its complement (en_hi_verb.frame). */
enum {
    V_INTR, /* no object: "the children laugh", optionally a location */
    V_GOAL, /* a destination: "go to the market" → "बाज़ार जाना" */
    V_DIR,  /* a direct object; animate ones take को: "see the boy" → "लड़के को देखना" */
    V_SE,   /* an object with से: "talk to Ram" → "राम से बात करना" */
    V_GEN,  /* an object in the genitive of the light noun: "help Ram" → "राम की मदद करना" */
    V_DAT,  /* a direct object and a recipient with को: "give a book to Sita" → "सीता को किताब देना" */
};

/* Tenses (en_hi_verb.tenses is a mask of 1 << T_*). */
enum { T_HAB, T_PROG, T_PAST, T_FUT, T_COUNT };
#define T_ALL ((1u << T_HAB) | (1u << T_PROG) | (1u << T_PAST) | (1u << T_FUT))
#define T_NOPAST ((1u << T_HAB) | (1u << T_PROG) | (1u << T_FUT))

/* Kinds of location phrase (en_hi_place.kind, en_hi_verb.places). */
enum {
    P_HOME = 1u << 0,  /* at home, in the kitchen, in the room, on the roof */
    P_OUT = 1u << 1,   /* in the park, in the garden */
    P_WORK = 1u << 2,  /* at school, in the office, in the market, in the hospital */
    P_TOWN = 1u << 3,  /* in Delhi, in the village */
    P_WATER = 1u << 4, /* in the river, in the pond */
    P_SCHOOL = 1u << 5, /* at school */
};

typedef struct en_hi_verb {
    const char *en, *en_s, *en_past, *en_ing; /* drink, drinks, drank, drinking */
    const char *en_prep;  /* word between the English verb and its object: "to" (talk to), "for" */
    const char *hi;       /* stem: पी */
    const char *light;    /* word before the verb that negation follows: बात (बात नहीं करता) */
    char light_g;         /* gender of a light noun that the perfective agrees with, else 0 */
    int frame;            /* V_* */
    int ergative;         /* 1: the subject takes ने in the perfective (transitive verbs) */
    unsigned subj, obj;   /* S_* of subject and object */
    unsigned places;      /* P_* of location phrases it takes */
    unsigned tenses;      /* 1 << T_* */
    const char *pfv[4];   /* irregular perfective: m.sg, f.sg, m.pl, f.pl */
    const char *fut[4];   /* irregular future, masculine: मैं, तुम, वह, plural */
    int benefactive;      /* takes "for X" → "X के लिए": make tea for my mother */
} en_hi_verb;

#define HA (S_HUM | S_ANI)
#define ANIMATE (S_HUM | S_ANI)
#define PFV_KAR {"किया", "की", "किए", "कीं"}

static const en_hi_verb en_hi_verbs[] = {
    /* transitive, direct object */
    {"drink", "drinks", "drank", "drinking", 0, "पी", 0, 0, V_DIR, 1, HA, S_DRINK, P_HOME | P_WORK | P_OUT, T_ALL,
     {"पिया", "पी", "पिए", "पीं"}, {"पिऊँगा", "पियोगे", "पिएगा", "पिएँगे"}, 0},
    {"eat", "eats", "ate", "eating", 0, "खा", 0, 0, V_DIR, 1, HA, S_FOOD | S_FODDER, P_HOME | P_WORK | P_OUT, T_ALL, {0}, {0}, 0},
    {"make", "makes", "made", "making", 0, "बना", 0, 0, V_DIR, 1, S_HUM, S_DISH, P_HOME, T_ALL, {0}, {0}, 1},
    {"cook", "cooks", "cooked", "cooking", 0, "पका", 0, 0, V_DIR, 1, S_HUM, S_COOK, P_HOME, T_ALL, {0}, {0}, 1},
    {"read", "reads", "read", "reading", 0, "पढ़", 0, 0, V_DIR, 1, S_HUM, S_READ, P_HOME | P_WORK | P_OUT, T_ALL, {0}, {0}, 0},
    {"write", "writes", "wrote", "writing", 0, "लिख", 0, 0, V_DIR, 1, S_HUM, S_WRITE, P_HOME | P_WORK, T_ALL, {0}, {0}, 1},
    {"buy", "buys", "bought", "buying", 0, "ख़रीद", 0, 0, V_DIR, 1, S_HUM, S_BUY, P_WORK | P_TOWN, T_ALL, {0}, {0}, 1},
    {"sell", "sells", "sold", "selling", 0, "बेच", 0, 0, V_DIR, 1, S_HUM, S_BUY, P_WORK | P_TOWN, T_ALL, {0}, {0}, 0},
    {"wash", "washes", "washed", "washing", 0, "धो", 0, 0, V_DIR, 1, S_HUM, S_WASH, P_HOME, T_ALL, {0}, {0}, 0},
    {"open", "opens", "opened", "opening", 0, "खोल", 0, 0, V_DIR, 1, S_HUM, S_OPEN, 0, T_ALL, {0}, {0}, 0},
    {"close", "closes", "closed", "closing", 0, "कर", "बंद", 0, V_DIR, 1, S_HUM, S_OPEN, 0, T_ALL, PFV_KAR, {0}, 0},
    {"clean", "cleans", "cleaned", "cleaning", 0, "कर", "साफ़", 0, V_DIR, 1, S_HUM, S_CLEAN, 0, T_ALL, PFV_KAR, {0}, 0},
    {"see", "sees", "saw", "seeing", 0, "देख", 0, 0, V_DIR, 1, HA, ANIMATE | S_SEE, P_OUT | P_WORK | P_TOWN, T_ALL, {0}, {0}, 0},
    {"call", "calls", "called", "calling", 0, "बुला", 0, 0, V_DIR, 1, S_HUM, ANIMATE, 0, T_ALL, {0}, {0}, 0},
    {"watch", "watches", "watched", "watching", 0, "देख", 0, 0, V_DIR, 1, S_HUM, S_SHOW, P_HOME, T_ALL, {0}, {0}, 0},
    {"learn", "learns", "learned", "learning", 0, "सीख", 0, 0, V_DIR, 1, S_HUM, S_LANG, P_SCHOOL | P_TOWN, T_ALL, {0}, {0}, 0},
    {"speak", "speaks", "spoke", "speaking", 0, "बोल", 0, 0, V_DIR, 1, S_HUM, S_SPEAK, P_HOME | P_WORK, T_NOPAST, {0}, {0}, 0},
    {"play", "plays", "played", "playing", 0, "खेल", 0, 0, V_DIR, 1, S_HUM, S_GAME, P_OUT, T_ALL, {0}, {0}, 0},
    {"sing", "sings", "sang", "singing", 0, "गा", 0, 0, V_DIR, 1, S_HUM, S_SONG, P_HOME | P_WORK, T_ALL, {0}, {0}, 1},
    {"fly", "flies", "flew", "flying", 0, "उड़ा", 0, 0, V_DIR, 1, S_HUM, S_KITE, P_OUT, T_ALL, {0}, {0}, 0},
    /* लाना takes no ने although it has an object: "वह चाय लाया" */
    {"bring", "brings", "brought", "bringing", 0, "ला", 0, 0, V_DIR, 0, S_HUM, S_DRINK | S_BUY, 0, T_ALL, {0}, {0}, 1},
    /* objects with से or in the genitive */
    {"meet", "meets", "met", "meeting", 0, "मिल", 0, 0, V_SE, 0, S_HUM, S_HUM, P_WORK | P_OUT | P_TOWN, T_ALL, {0}, {0}, 0},
    {"ask", "asks", "asked", "asking", 0, "पूछ", 0, 0, V_SE, 1, S_HUM, S_HUM, 0, T_ALL, {0}, {0}, 0},
    {"talk", "talks", "talked", "talking", "to", "कर", "बात", 'f', V_SE, 1, S_HUM, S_HUM, P_HOME | P_WORK, T_ALL, PFV_KAR, {0}, 0},
    {"help", "helps", "helped", "helping", 0, "कर", "मदद", 'f', V_GEN, 1, S_HUM, S_HUM, P_HOME | P_WORK, T_ALL, PFV_KAR, {0}, 0},
    {"wait", "waits", "waited", "waiting", "for", "कर", "इंतज़ार", 'm', V_GEN, 1, S_HUM, S_HUM, P_WORK | P_OUT, T_ALL, PFV_KAR, {0}, 0},
    /* a recipient with को */
    {"give", "gives", "gave", "giving", "to", "दे", 0, 0, V_DAT, 1, S_HUM, S_BUY | S_SEND, 0, T_ALL,
     {"दिया", "दी", "दिए", "दीं"}, {"दूँगा", "दोगे", "देगा", "देंगे"}, 0},
    {"send", "sends", "sent", "sending", "to", "भेज", 0, 0, V_DAT, 1, S_HUM, S_SEND, 0, T_ALL, {0}, {0}, 0},
    {"show", "shows", "showed", "showing", "to", "दिखा", 0, 0, V_DAT, 1, S_HUM, S_SEND, 0, T_ALL, {0}, {0}, 0},
    /* motion to a destination */
    {"go", "goes", "went", "going", "to", "जा", 0, 0, V_GOAL, 0, S_HUM, 0, 0, T_ALL, {"गया", "गई", "गए", "गईं"}, {0}, 0},
    {"come", "comes", "came", "coming", "to", "आ", 0, 0, V_GOAL, 0, S_HUM, 0, 0, T_ALL, {0}, {0}, 0},
    {"return", "returns", "returned", "returning", "to", "लौट", 0, 0, V_GOAL, 0, S_HUM, 0, 0, T_ALL, {0}, {0}, 0},
    {"reach", "reaches", "reached", "reaching", 0, "पहुँच", 0, 0, V_GOAL, 0, S_HUM, 0, 0, T_ALL, {0}, {0}, 0},
    /* intransitive */
    {"sleep", "sleeps", "slept", "sleeping", 0, "सो", 0, 0, V_INTR, 0, HA, 0, P_HOME, T_ALL, {0}, {0}, 0},
    {"run", "runs", "ran", "running", 0, "दौड़", 0, 0, V_INTR, 0, HA, 0, P_OUT, T_ALL, {0}, {0}, 0},
    {"walk", "walks", "walked", "walking", 0, "टहल", 0, 0, V_INTR, 0, S_HUM, 0, P_OUT, T_ALL, {0}, {0}, 0},
    {"sit", "sits", "sat", "sitting", 0, "बैठ", 0, 0, V_INTR, 0, HA, 0, P_HOME | P_OUT | P_WORK, T_ALL, {0}, {0}, 0},
    {"laugh", "laughs", "laughed", "laughing", 0, "हँस", 0, 0, V_INTR, 0, S_HUM, 0, P_HOME | P_WORK | P_OUT, T_ALL, {0}, {0}, 0},
    {"cry", "cries", "cried", "crying", 0, "रो", 0, 0, V_INTR, 0, S_HUM, 0, P_HOME | P_WORK, T_ALL, {0}, {0}, 0},
    {"dance", "dances", "danced", "dancing", 0, "नाच", 0, 0, V_INTR, 0, S_HUM, 0, P_HOME | P_OUT | P_WORK, T_ALL, {0}, {0}, 0},
    {"swim", "swims", "swam", "swimming", 0, "तैर", 0, 0, V_INTR, 0, HA, 0, P_WATER, T_ALL, {0}, {0}, 0},
    {"live", "lives", "lived", "living", 0, "रह", 0, 0, V_INTR, 0, S_HUM, 0, P_TOWN, T_NOPAST, {0}, {0}, 0},
    {"study", "studies", "studied", "studying", 0, "पढ़", 0, 0, V_INTR, 0, S_HUM, 0, P_SCHOOL | P_TOWN, T_NOPAST, {0}, {0}, 0},
    /* काम करना: the light noun काम is the object that the perfective agrees with */
    {"work", "works", "worked", "working", 0, "कर", "काम", 'm', V_INTR, 1, S_HUM, 0, P_HOME | P_WORK | P_TOWN, T_ALL, PFV_KAR, {0}, 0},
};

typedef struct en_hi_place {
    const char *en_at;  /* location: "in the kitchen" */
    const char *en_to;  /* destination without "to", or 0 if none: "the market", "home" */
    const char *hi_at;  /* "रसोई में" */
    const char *hi_to;  /* "बाज़ार" (a destination takes no postposition) */
    unsigned kind;      /* P_* */
} en_hi_place;

static const en_hi_place en_hi_places[] = {
    {"at home", "home", "घर पर", "घर", P_HOME},
    {"in the kitchen", 0, "रसोई में", 0, P_HOME},
    {"in the room", 0, "कमरे में", 0, P_HOME},
    {"on the roof", 0, "छत पर", 0, P_HOME},
    {"in the garden", 0, "बग़ीचे में", 0, P_OUT},
    {"in the park", "the park", "पार्क में", "पार्क", P_OUT},
    {"at school", "school", "स्कूल में", "स्कूल", P_WORK | P_SCHOOL},
    {"in the office", "the office", "दफ़्तर में", "दफ़्तर", P_WORK},
    {"in the market", "the market", "बाज़ार में", "बाज़ार", P_WORK},
    {"in the hospital", "the hospital", "अस्पताल में", "अस्पताल", P_WORK},
    {"at the station", "the station", "स्टेशन पर", "स्टेशन", P_WORK},
    {"in the temple", "the temple", "मंदिर में", "मंदिर", P_OUT},
    {"in the village", "the village", "गाँव में", "गाँव", P_TOWN},
    {"in Delhi", "Delhi", "दिल्ली में", "दिल्ली", P_TOWN},
    {"in Mumbai", "Mumbai", "मुंबई में", "मुंबई", P_TOWN},
    {"in Jaipur", "Jaipur", "जयपुर में", "जयपुर", P_TOWN},
    {"in Agra", "Agra", "आगरा में", "आगरा", P_TOWN},
    {"in Lucknow", "Lucknow", "लखनऊ में", "लखनऊ", P_TOWN},
    {"in Kolkata", "Kolkata", "कोलकाता में", "कोलकाता", P_TOWN},
    {"in Patna", "Patna", "पटना में", "पटना", P_TOWN},
    {"in the river", 0, "नदी में", 0, P_WATER},
    {"in the pond", 0, "तालाब में", 0, P_WATER},
};

typedef struct en_hi_time {
    const char *en, *hi;
    int tense;          /* T_* it goes with */
} en_hi_time;

static const en_hi_time en_hi_times[] = {
    {"every day", "हर दिन", T_HAB},          {"every morning", "हर सुबह", T_HAB},
    {"every evening", "हर शाम", T_HAB},      {"every week", "हर हफ़्ते", T_HAB},
    {"on Sundays", "रविवार को", T_HAB},      {"now", "अभी", T_PROG},
    {"yesterday", "कल", T_PAST},             {"last week", "पिछले हफ़्ते", T_PAST},
    {"this morning", "आज सुबह", T_PAST},     {"last year", "पिछले साल", T_PAST},
    {"tomorrow", "कल", T_FUT},               {"next week", "अगले हफ़्ते", T_FUT},
    {"tomorrow morning", "कल सुबह", T_FUT}, {"next year", "अगले साल", T_FUT},
};

typedef struct en_hi_number {
    const char *en, *hi;
} en_hi_number;

static const en_hi_number en_hi_numbers[] = {
    {"two", "दो"}, {"three", "तीन"}, {"four", "चार"}, {"five", "पाँच"},
};

#endif
