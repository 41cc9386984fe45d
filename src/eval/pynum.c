/* pynum: Python's numbers as sacreBLEU computes and prints them. */
#include "eval/pynum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t nmt_pynum_fixed(double x, int width, char *out, size_t size) {
    int n = snprintf(out, size, "%.*f", width, x);
    return n < 0 ? 0 : (size_t)n;
}

double nmt_pynum_rounded(double x, int width) {
    char buf[400];
    nmt_pynum_fixed(x, width, buf, sizeof buf);
    return strtod(buf, NULL);
}

size_t nmt_pynum_repr(double x, char *out) {
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
