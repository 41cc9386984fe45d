"""libnmt through ctypes: finding and loading the library, the C structures of include/nmt/nmt.h,
the functions' signatures, errors, and the checks that turn Python arguments into C ones.

The library is the first of these that loads: ``$NMT_LIBRARY`` (a path); ``libnmt.so.0`` beside this
package (a copy shipped with it); the library ``cmake --install`` put beside the package it
installed (``_installed.py`` records where, relative to the package); ``sys.prefix``'s ``lib``;
what ``ctypes.util.find_library("nmt")`` finds (ldconfig's cache); ``libnmt.so.0`` on the loader's
path (``LD_LIBRARY_PATH``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple

SONAME = "libnmt.so.0"


class NmtError(RuntimeError):
    """An error reported by libnmt; the message names the file, line or option that is wrong."""


class EngineOptions(ctypes.Structure):
    """nmt_engine_options."""

    _fields_ = [
        ("beam_size", ctypes.c_int),
        ("n_best", ctypes.c_int),
        ("greedy", ctypes.c_int),
        ("length_penalty", ctypes.c_double),
        ("max_length_ratio", ctypes.c_double),
        ("threads", ctypes.c_int),
        ("precision", ctypes.c_char_p),
        ("max_batch", ctypes.c_int),
        ("max_input_length", ctypes.c_int),
        ("crop", ctypes.c_int),
        ("alignment", ctypes.c_int),
        ("sampling", ctypes.c_int),
        ("sampling_topk", ctypes.c_int),
        ("sampling_topp", ctypes.c_double),
        ("temperature", ctypes.c_double),
        ("seed", ctypes.c_ulonglong),
        ("batch_tokens", ctypes.c_int),
        ("shortlist", ctypes.c_int),
        ("repetition_penalty", ctypes.c_double),
        ("no_repeat_ngram_size", ctypes.c_int),
        ("loop_guard", ctypes.c_int),
        ("confidence", ctypes.c_int),
    ]


# void (*)(void *user, int line, const char *text, int final)
StreamCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int)


class TranslateOptions(ctypes.Structure):
    """nmt_translate_options."""

    _fields_ = [
        ("options", ctypes.POINTER(EngineOptions)),
        ("first_line", ctypes.c_ulonglong),
        ("target_prefix", ctypes.POINTER(ctypes.c_char_p)),
        ("constraints", ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p))),
        ("glossary", ctypes.POINTER(ctypes.c_char_p)),
        ("glossary_size", ctypes.c_int),
        ("glossary_case", ctypes.c_int),
        ("stream", StreamCallback),
        ("stream_user", ctypes.c_void_p),
    ]


class Metric(ctypes.Structure):
    """nmt_corpus_metric."""

    _fields_ = [("value", ctypes.c_double), ("name", ctypes.c_char * 32), ("signature", ctypes.c_char * 256)]


class CorpusOptions(ctypes.Structure):
    """nmt_corpus_options."""

    _fields_ = [
        ("tokenize", ctypes.c_char_p),
        ("lowercase", ctypes.c_int),
        ("smooth_method", ctypes.c_char_p),
        ("smooth_value", ctypes.c_double),
        ("use_effective_order", ctypes.c_int),
        ("char_order", ctypes.c_int),
        ("word_order", ctypes.c_int),
        ("beta", ctypes.c_int),
        ("whitespace", ctypes.c_int),
        ("eps_smoothing", ctypes.c_int),
        ("normalized", ctypes.c_int),
        ("no_punct", ctypes.c_int),
        ("asian_support", ctypes.c_int),
        ("case_sensitive", ctypes.c_int),
    ]


class CorpusDetails(ctypes.Structure):
    """nmt_corpus_details."""

    _fields_ = [
        ("verbose", ctypes.c_char * 160),
        ("order", ctypes.c_int),
        ("counts", ctypes.c_double * 4),
        ("totals", ctypes.c_double * 4),
        ("precisions", ctypes.c_double * 4),
        ("bp", ctypes.c_double),
        ("ratio", ctypes.c_double),
        ("sys_len", ctypes.c_long),
        ("ref_len", ctypes.c_long),
    ]


def _signatures() -> dict:
    c_int, c_double, c_char_p, c_void_p = ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p
    strings, ints = ctypes.POINTER(c_char_p), ctypes.POINTER(c_int)
    return {
        "nmt_version": (c_char_p, []),
        "nmt_last_error": (c_char_p, []),
        "nmt_engine_options_default": (EngineOptions, []),
        "nmt_engine_open": (c_int, [ctypes.POINTER(c_void_p), c_char_p, ctypes.POINTER(EngineOptions)]),
        "nmt_engine_close": (None, [c_void_p]),
        "nmt_engine_get_options": (ctypes.POINTER(EngineOptions), [c_void_p]),
        "nmt_engine_source_language": (c_char_p, [c_void_p]),
        "nmt_engine_target_language": (c_char_p, [c_void_p]),
        "nmt_translate_options_default": (TranslateOptions, []),
        "nmt_engine_translate_with": (
            c_int, [c_void_p, c_int, strings, ctypes.POINTER(TranslateOptions), ctypes.POINTER(c_void_p)]),
        "nmt_engine_logprob": (c_int, [c_void_p, c_int, strings, strings, ctypes.POINTER(c_double)]),
        "nmt_result_free": (None, [c_void_p]),
        "nmt_result_hypotheses": (c_int, [c_void_p, c_int]),
        "nmt_result_hypothesis": (c_char_p, [c_void_p, c_int, c_int]),
        "nmt_result_score": (c_double, [c_void_p, c_int, c_int]),
        "nmt_result_logprob": (c_double, [c_void_p, c_int, c_int]),
        "nmt_result_alignment": (c_int, [c_void_p, c_int, c_int, ctypes.POINTER(ints)]),
        "nmt_result_confidence": (
            c_int, [c_void_p, c_int, c_int, ctypes.POINTER(c_double), ctypes.POINTER(c_double)]),
        "nmt_result_target_pieces": (strings, [c_void_p, c_int, c_int, ints]),
        "nmt_corpus_options_default": (CorpusOptions, []),
        "nmt_corpus_score": (
            c_int, [c_char_p, c_int, strings, c_int, strings, ctypes.POINTER(CorpusOptions), ctypes.POINTER(Metric),
                    ctypes.POINTER(CorpusDetails)]),
    }


def _candidates() -> List[str]:
    """Where the library may be, in the order tried (module docstring)."""
    here = Path(__file__).resolve().parent
    found: List[str] = []
    if os.environ.get("NMT_LIBRARY"):
        return [os.environ["NMT_LIBRARY"]]
    found.append(str(here / SONAME))
    try:
        from . import _installed  # written by `cmake --install`

        found.append(os.path.normpath(here / _installed.LIBRARY))
    except ImportError:
        pass
    found.append(str(Path(sys.prefix) / "lib" / SONAME))
    system = ctypes.util.find_library("nmt")
    if system:
        found.append(system)
    found.append(SONAME)
    return found


_lib: Optional[ctypes.CDLL] = None


def library() -> ctypes.CDLL:
    """The loaded libnmt (ctypes.CDLL), loaded on first use; NmtError names what was tried."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    lib = None
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path}: no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            tried.append(str(e))
    if lib is None:
        raise NmtError(
            "cannot load libnmt (" + "; ".join(tried) + "): set NMT_LIBRARY to the path of libnmt.so, or put the "
            "directory `cmake --install` wrote it to on the library path")
    for name, (restype, argtypes) in _signatures().items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise NmtError(f"the libnmt loaded ({lib._name}) has no {name}: it is older than this package") from None
        function.restype = restype
        function.argtypes = argtypes
    _lib = lib
    return lib


def fail() -> NmtError:
    """The calling thread's last libnmt error as an exception."""
    return NmtError(library().nmt_last_error().decode("utf-8", "replace"))


def text(value: Any, what: str) -> bytes:
    """One sentence as C takes it: a str without newline or NUL, UTF-8 encoded."""
    if not isinstance(value, str):
        hint = " (one sentence; a list of them is for the *_batch functions)" if isinstance(value, (list, tuple)) else ""
        raise TypeError(f"{what} must be a str, not {type(value).__name__}{hint}")
    if "\n" in value:
        raise ValueError(f"{what} holds a newline: give one sentence per item")
    if "\0" in value:
        raise ValueError(f"{what} holds a NUL character at {value.index(chr(0))}: the text after it would be lost")
    return value.encode("utf-8")


def sequence(items: Any, what: str) -> list:
    """A list of items where a list belongs; a str or bytes is refused, naming the argument."""
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{what} must be a list, not {type(items).__name__} (a list of sentences: [...])")
    if not isinstance(items, Iterable):
        raise TypeError(f"{what} must be a list, not {type(items).__name__}")
    return list(items)


def strings(items: Any, what: str) -> Tuple[Any, int]:
    """A list of sentences as a C array of char * (and its length)."""
    items = sequence(items, what)
    array = (ctypes.c_char_p * max(len(items), 1))()
    for i, s in enumerate(items):
        array[i] = text(s, f"{what}[{i}]")
    return array, len(items)


def check_int(name: str, value: Any, ctype: Any) -> int:
    """An int that fits the C field (beam_size=2**32 + 1 is refused, not wrapped to 1)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value == -1
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise ValueError(f"{name}={value} is out of range ({low} to {high})")
    return value


def set_field(struct: ctypes.Structure, name: str, value: Any) -> None:
    """Sets struct.name from a Python value, checked for the field's C type (bools as 0/1)."""
    ctype = dict(struct._fields_)[name]
    if ctype is ctypes.c_double:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, not {type(value).__name__}")
        setattr(struct, name, float(value))
    elif ctype is ctypes.c_char_p:
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        setattr(struct, name, None if value is None else value.encode())
    elif isinstance(value, bool):
        setattr(struct, name, int(value))
    else:
        setattr(struct, name, check_int(name, value, ctype))


def optional_strings(items: Optional[Sequence[Optional[str]]], count: int, what: str) -> Any:
    """A list of count sentences or None entries as a C array (None: NULL), or NULL for None."""
    if items is None:
        return None
    items = sequence(items, what)
    if len(items) != count:
        raise ValueError(f"{what} has {len(items)} entries for {count} lines")
    array = (ctypes.c_char_p * max(count, 1))()
    for i, s in enumerate(items):
        array[i] = None if s is None else text(s, f"{what}[{i}]")
    return array
