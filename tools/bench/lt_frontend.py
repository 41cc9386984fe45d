#!/usr/bin/python3
"""lt_frontend.py: LibreTranslate's own web front end, unchanged, in front of `nmt serve`.

Renders LibreTranslate's templates (templates/index.html and templates/app.js.template of a
LibreTranslate checkout's libretranslate/ folder) with Jinja2 as its Flask app would for a server
with default options (English interface, no API keys, no secret, no URL prefix), serves them at / and
/js/app.js with static/ at /static/, and passes every other request through to `nmt serve` unchanged:
method, path, headers (Host included, so that the translatedFileUrl nmt serve answers points back
here) and body, and the answer back as it came. Prints `listening on http://127.0.0.1:PORT` on
stderr once it accepts connections.

    lt_frontend.py LIBRETRANSLATE_DIR NMT_SERVE_URL [PORT]   (PORT 0, the default: a free one)
"""
import http.client
import http.server
import json
import os
import sys
import urllib.parse

import jinja2
import markupsafe

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate"}


def gettext(text, **variables):
    """flask_babel's gettext with no catalogue: the English text, %-formatted with the variables."""
    return text % variables if variables else text


def gettext_html(text, **variables):
    """LibreTranslate's _h (locales.py): the text escaped, the variables taken as already safe."""
    escaped = str(markupsafe.escape(text))
    safe = {k: v.unescape() if hasattr(v, "unescape") else markupsafe.Markup(v) for k, v in variables.items()}
    return markupsafe.Markup(escaped % safe if safe else escaped)


def gettext_escaped(text, **variables):
    """LibreTranslate's _e (locales.py): the text as a JavaScript string literal."""
    return json.dumps(gettext(text, **variables))


def url_for(endpoint, filename=None, **_):
    """Flask's url_for for the two endpoints the templates name."""
    if endpoint == "static":
        return "/static/" + filename
    if endpoint == "Main app.index":
        return "/"
    raise KeyError("lt_frontend.py: no URL for the endpoint " + endpoint)


def render(root):
    """index.html and app.js as LibreTranslate's index() and appjs() render them with default options."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(root, "templates")),
                             autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined)
    env.globals.update(_=gettext, N_=gettext, _h=gettext_html, _e=gettext_escaped, url_for=url_for)
    page = env.get_template("index.html").render(
        frontendTimeout=500, api_keys=False, get_api_key_link="", web_version=False, version="nmt",
        swagger_url="/docs", available_locales=[{"code": "en", "name": "English"}], current_locale="en",
        alternate_locales=[], under_attack=False, hide_api=False, frontend_title="")
    script = env.get_template("app.js.template").render(
        url_prefix="", get_api_key_link="", api_secret="", bogus_api_secret="", under_attack=False)
    return page.encode(), script.encode()


def handler(root, backend, page, script):
    static = os.path.realpath(os.path.join(root, "static"))
    types = {".css": "text/css", ".js": "application/javascript", ".svg": "image/svg+xml", ".ico": "image/x-icon",
             ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".eot": "application/vnd.ms-fontobject"}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            sys.stderr.write("lt_frontend.py: %s %s\n" % (self.address_string(), fmt % args))

        def answer(self, status, content_type, body):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def own(self):
            """The page, its script and its static files: True when the path is one of them."""
            path = urllib.parse.urlsplit(self.path).path
            if path == "/":
                self.answer(200, "text/html; charset=utf-8", page)
            elif path == "/js/app.js":
                self.answer(200, "application/javascript; charset=utf-8", script)
            elif path.startswith("/static/"):
                file = os.path.realpath(os.path.join(static, urllib.parse.unquote(path[len("/static/"):])))
                if not file.startswith(static + os.sep) or not os.path.isfile(file):
                    self.answer(404, "text/plain", b"not found\n")
                else:
                    with open(file, "rb") as f:
                        self.answer(200, types.get(os.path.splitext(file)[1], "application/octet-stream"), f.read())
            else:
                return False
            return True

        def relay(self):
            if self.command in ("GET", "HEAD") and self.own():
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else None
            upstream = http.client.HTTPConnection(backend.hostname, backend.port, timeout=600)
            upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for key, value in self.headers.items():
                if key.lower() not in HOP_BY_HOP:
                    upstream.putheader(key, value)
            upstream.endheaders(body)
            reply = upstream.getresponse()
            data = reply.read()
            self.send_response_only(reply.status, reply.reason)  # nmt serve's own headers, no second Date
            for key, value in reply.getheaders():
                if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            upstream.close()

        do_GET = do_HEAD = do_POST = do_OPTIONS = relay

    return Handler


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: lt_frontend.py LIBRETRANSLATE_DIR NMT_SERVE_URL [PORT]")
    root = os.path.join(sys.argv[1], "libretranslate")
    backend = urllib.parse.urlsplit(sys.argv[2])
    if not os.path.isfile(os.path.join(root, "templates", "index.html")):
        sys.exit("lt_frontend.py: %s: no libretranslate/templates/index.html" % sys.argv[1])
    page, script = render(root)
    port = int(sys.argv[3]) if len(sys.argv) == 4 else 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler(root, backend, page, script))
    sys.stderr.write("listening on http://127.0.0.1:%d\n" % server.server_address[1])
    sys.stderr.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
