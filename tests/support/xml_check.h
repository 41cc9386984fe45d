/* xml_check: what the tests of SVG pictures share.
 *
 * nmt_test_xml_error(doc): NULL when doc is well-formed XML of the kind the plot canvas writes, else
 * what is wrong. nmt_test_count(doc, s): how many times s occurs in doc.
 */
#ifndef NMT_TEST_XML_CHECK_H
#define NMT_TEST_XML_CHECK_H

#include "base/utf8.h"

#include <stdio.h>
#include <string.h>

/* A small XML well-formedness check for what the canvas writes: a prolog, balanced elements,
 * quoted attributes, no raw '<' or stray '&' in text or values, valid UTF-8, one root element. */
static inline int nmt_test_entity_ok(const char *s) {
    static const char *const entities[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (int i = 0; i < 5; i++)
        if (strncmp(s, entities[i], strlen(entities[i])) == 0) return (int)strlen(entities[i]);
    return 0;
}

static inline int nmt_test_is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == ':' || c == '_';
}

static inline const char *nmt_test_xml_error(const char *doc) {
    static char message[128];
    if (nmt_utf8_invalid_at(doc, strlen(doc)) >= 0) return "invalid UTF-8";
    if (strncmp(doc, "<?xml ", 6) != 0) return "no XML declaration";
    const char *p = strstr(doc, "?>");
    if (!p) return "unterminated declaration";
    p += 2;
    char stack[16][32];
    int depth = 0, roots = 0;
    while (*p) {
        if (*p == '&') {
            int n = nmt_test_entity_ok(p);
            if (!n) return "stray & in text";
            p += n;
        } else if (*p != '<') {
            if (depth == 0 && *p != '\n') return "text outside the root";
            p++;
        } else if (p[1] == '/') {
            p += 2;
            int n = 0;
            while (nmt_test_is_name_char(p[n])) n++;
            if (depth == 0 || (int)strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], p, (size_t)n) != 0) {
                snprintf(message, sizeof message, "mismatched end tag at '%.20s'", p);
                return message;
            }
            depth--;
            p += n;
            if (*p++ != '>') return "bad end tag";
        } else {
            p++;
            int n = 0;
            while (nmt_test_is_name_char(p[n])) n++;
            if (n == 0 || n >= 32) return "bad element name";
            if (depth == 0 && ++roots > 1) return "two root elements";
            if (depth == 16) return "too deep";
            memcpy(stack[depth], p, (size_t)n);
            stack[depth][n] = '\0';
            p += n;
            for (;;) {
                while (*p == ' ' || *p == '\n') p++;
                if (*p == '>' || (p[0] == '/' && p[1] == '>')) break;
                int a = 0;
                while (nmt_test_is_name_char(p[a])) a++;
                if (a == 0 || p[a] != '=' || p[a + 1] != '"') return "bad attribute";
                p += a + 2;
                while (*p && *p != '"') {
                    if (*p == '<') return "raw < in an attribute";
                    if (*p == '&') {
                        int e = nmt_test_entity_ok(p);
                        if (!e) return "stray & in an attribute";
                        p += e;
                    } else {
                        p++;
                    }
                }
                if (*p++ != '"') return "unterminated attribute";
            }
            if (*p == '/') p += 2;
            else p++, depth++;
        }
    }
    return depth == 0 && roots == 1 ? NULL : "unclosed elements";
}

static inline int nmt_test_count(const char *haystack, const char *needle) {
    int n = 0;
    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

#endif
