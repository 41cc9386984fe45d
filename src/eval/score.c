/* score: signatures and Python-compatible number formatting. */
#include "eval/score.h"

#include "nmt/version.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends text to out[0..size) at *len, counting what does not fit. */
static void append(char *out, size_t size, size_t *len, const char *text) {
    size_t n = strlen(text);
    if (*len < size) {
        size_t room = size - *len - 1;
        memcpy(out + *len, text, n < room ? n : room);
        out[*len + (n < room ? n : room)] = '\0';
    }
    *len += n;
}

static void append_pair(char *out, size_t size, size_t *len, const char *key, const char *value) {
    if (*len) append(out, size, len, "|");
    append(out, size, len, key);
    append(out, size, len, ":");
    append(out, size, len, value);
}

size_t nmt_score_signature_format(const nmt_score_signature *global, const nmt_score_field *fields, int count,
                                  char *out, size_t size) {
    size_t len = 0;
    char value[32];
    if (size) out[0] = '\0';
    if (global->nrefs < 0) snprintf(value, sizeof value, "var");
    else snprintf(value, sizeof value, "%ld", global->nrefs);
    append_pair(out, size, &len, global->short_form ? "#" : "nrefs", value);
    if (global->bootstrap > 0) {
        snprintf(value, sizeof value, "%ld", global->bootstrap);
        append_pair(out, size, &len, "bs", value);
    }
    if (global->trials > 0) {
        snprintf(value, sizeof value, "%ld", global->trials);
        append_pair(out, size, &len, "ar", value);
    }
    if (global->seed) append_pair(out, size, &len, global->short_form ? "rs" : "seed", global->seed);
    for (int i = 0; i < count; i++)
        append_pair(out, size, &len, global->short_form ? fields[i].short_key : fields[i].key, fields[i].value);
    append_pair(out, size, &len, global->short_form ? "v" : "version", NMT_VERSION);
    return len;
}

size_t nmt_score_fixed(double x, int width, char *out, size_t size) {
    int n = snprintf(out, size, "%.*f", width, x);
    return n < 0 ? 0 : (size_t)n;
}

double nmt_score_rounded(double x, int width) {
    char buf[400];
    nmt_score_fixed(x, width, buf, sizeof buf);
    return strtod(buf, NULL);
}

size_t nmt_score_repr(double x, char *out) {
    if (isnan(x)) return (size_t)sprintf(out, "NaN");
    if (isinf(x)) return (size_t)sprintf(out, x > 0 ? "Infinity" : "-Infinity");
    if (x == 0) return (size_t)sprintf(out, signbit(x) ? "-0.0" : "0.0");
    /* The shortest correctly rounded digit string that reads back as x. */
    char digits[40];
    int precision = 0;
    for (; precision < 17; precision++) {
        snprintf(digits, sizeof digits, "%.*e", precision, x);
        if (strtod(digits, NULL) == x) break;
    }
    /* digits is "[-]d[.ddd]e[+-]XX": pull out the sign, the digits and the decimal exponent. */
    const char *p = digits;
    int negative = *p == '-';
    if (negative) p++;
    char mantissa[24];
    int count = 0;
    for (; *p != 'e'; p++)
        if (*p != '.') mantissa[count++] = *p;
    while (count > 1 && mantissa[count - 1] == '0') count--;
    mantissa[count] = '\0';
    int exponent = atoi(p + 1);
    int decpt = exponent + 1; /* x = 0.mantissa * 10^decpt */
    char *o = out;
    if (negative) *o++ = '-';
    if (decpt <= -4 || decpt > 16) { /* Python's repr switches to exponent form here */
        *o++ = mantissa[0];
        if (count > 1) {
            *o++ = '.';
            memcpy(o, mantissa + 1, (size_t)count - 1);
            o += count - 1;
        }
        o += sprintf(o, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
    } else if (decpt <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -decpt; i++) *o++ = '0';
        memcpy(o, mantissa, (size_t)count);
        o += count;
    } else {
        for (int i = 0; i < decpt; i++) *o++ = i < count ? mantissa[i] : '0';
        *o++ = '.';
        if (count > decpt) {
            memcpy(o, mantissa + decpt, (size_t)(count - decpt));
            o += count - decpt;
        } else {
            *o++ = '0';
        }
    }
    *o = '\0';
    return (size_t)(o - out);
}
