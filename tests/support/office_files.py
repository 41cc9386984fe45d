"""office_files.py: the documents e2e_serve_files.sh posts to /translate_file, and their checks.

  office_files.py make DIR            writes DIR/a.docx, a.pptx, a.odt, a.odp, a.epub and a.srt (small
                                      fixtures built with zipfile, as Word, PowerPoint, LibreOffice and an
                                      e-book writer lay them out)
  office_files.py check ORIG GOT SRC OUT
                                      checks that GOT (the translation of ORIG) is a well-formed archive of
                                      the same entries in the same order (an ODF's mimetype first and
                                      stored), every XML part well-formed and every entry but the
                                      translated parts unchanged, field codes kept; writes the source
                                      paragraphs of ORIG to SRC and the translated ones of GOT to OUT, one a
                                      line (.srt: the cues' texts, OUT wrapped lines joined with "|")
"""
import re
import sys
import zipfile
import xml.etree.ElementTree as ET

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
XHTML = "http://www.w3.org/1999/xhtml"


def docx_document():
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
            f'<w:document xmlns:w="{W}"><w:body>'
            '<w:p><w:pPr><w:jc w:val="center"/></w:pPr>'
            '<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">the cat </w:t></w:r>'
            '<w:r><w:rPr><w:i/></w:rPr><w:t>sees a dog</w:t></w:r></w:p>'
            '<w:p><w:r><w:t>big red</w:t></w:r><w:r><w:tab/><w:t>house</w:t></w:r>'
            '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r>'
            '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
            '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>the small tree runs</w:t></w:r></w:p></w:tc></w:tr></w:tbl>'
            '<w:p/><w:p><w:r><w:t>&amp; --</w:t></w:r></w:p>'
            '<w:sectPr/></w:body></w:document>')


def docx_part(tag, text):
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:{tag} xmlns:w="{W}">'
            f'<w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:{tag}>')


def slide(texts):
    paragraphs = "".join("<a:p>" + "".join(f"<a:r><a:rPr lang=\"en-US\"/><a:t>{t}</a:t></a:r>" for t in runs) + "</a:p>"
                         for runs in texts)
    return (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<p:sld xmlns:a="{A}" xmlns:p="{P}"><p:cSld>'
            f'<p:spTree><p:sp><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>')


def odf_content(body):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content xmlns:office="{OFFICE}" '
            f'xmlns:text="{TEXT}" xmlns:draw="{DRAW}" office:version="1.3"><office:body>{body}'
            '</office:body></office:document-content>')


def odf(path, mimetype, body):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), mimetype)  # stored, first
        z.writestr("META-INF/manifest.xml", '<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest '
                   'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>', zipfile.ZIP_DEFLATED)
        z.writestr("content.xml", odf_content(body), zipfile.ZIP_DEFLATED)
        z.writestr("styles.xml", odf_content(""), zipfile.ZIP_DEFLATED)


def make(d):
    with zipfile.ZipFile(f"{d}/a.docx", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/'
                   'package/2006/content-types"/>')
        z.writestr("word/document.xml", docx_document())
        z.writestr("word/header1.xml", docx_part("hdr", "the cat"))
        z.writestr("word/footer1.xml", docx_part("ftr", "a dog likes the blue house"))
        z.writestr("word/styles.xml", docx_part("styles", "the cat stays"))  # not translated
        z.writestr("word/media/image1.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), zipfile.ZIP_STORED)
    with zipfile.ZipFile(f"{d}/a.pptx", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ppt/presentation.xml", '<?xml version="1.0"?><p:presentation xmlns:p="' + P + '"/>')
        z.writestr("ppt/slides/slide1.xml", slide([["the cat sees", " a dog"], ["big red house"]]))
        z.writestr("ppt/slides/slide2.xml", slide([["the small tree runs"]]))
        z.writestr("ppt/slides/_rels/slide1.xml.rels", '<?xml version="1.0"?><Relationships/>')
    odf(f"{d}/a.odt", "application/vnd.oasis.opendocument.text",
        '<office:text><text:h text:outline-level="1">big red house</text:h>'
        '<text:p>the cat <text:span text:style-name="T1">sees</text:span> a dog</text:p>'
        '<text:p>the small<text:s/>tree runs<text:note><text:note-citation>1</text:note-citation>'
        '<text:note-body><text:p>the cat</text:p></text:note-body></text:note></text:p><text:p/></office:text>')
    odf(f"{d}/a.odp", "application/vnd.oasis.opendocument.presentation",
        '<office:presentation><draw:page><draw:frame><draw:text-box><text:p>a dog likes the blue house</text:p>'
        '</draw:text-box></draw:frame></draw:page></office:presentation>')
    with zipfile.ZipFile(f"{d}/a.epub", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:'
                   'tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" '
                   'media-type="application/oebps-package+xml"/></rootfiles></container>')
        z.writestr("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" '
                   'version="3.0"><manifest><item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>'
                   '<item id="css" href="s.css" media-type="text/css"/></manifest>'
                   '<spine><itemref idref="c1"/></spine></package>')
        z.writestr("OEBPS/ch1.xhtml", f'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="{XHTML}">'
                   '<head><title>the cat</title><style>p { color: red }</style></head><body><h1>big red house</h1>'
                   '<p>the cat <em>sees</em> a dog</p><p>the small tree runs<br/></p><p><code>the cat</code></p></body></html>')
        z.writestr("OEBPS/s.css", "p { margin: 0 }")
    with open(f"{d}/a.srt", "wb") as f:
        f.write("\ufeff1\r\n00:00:01,000 --> 00:00:02,500\r\nthe cat sees\r\na dog\r\n\r\n"
                "2\r\n00:00:03,000 --> 00:00:04,000\r\nbig red house\r\n".encode())


def collapse(text):
    return re.sub(r"\s+", " ", text).strip()


def paragraphs(root, is_paragraph, is_text, is_space, is_skipped, all_text):
    """The texts of the paragraphs under root, each text in its innermost paragraph."""
    found = []

    def walk(el, cur, skipped):
        skipped = skipped or is_skipped(el.tag)
        if is_paragraph(el.tag) and not skipped:
            cur = []
            found.append(cur)
        if cur is not None and not skipped:
            if is_space(el.tag):
                cur.append(" ")
            if el.text and (all_text or is_text(el.tag)):
                cur.append(el.text)
        for child in el:
            walk(child, cur, skipped)
            if cur is not None and not skipped and child.tail and all_text:
                cur.append(child.tail)

    walk(root, None, False)
    return [t for t in (collapse("".join(p)) for p in found) if re.search(r"\w", t) and re.search(r"[^\W_]", t)]


def rules(name):
    if name.endswith(".docx"):
        return (r"word/(document|header\d*|footer\d*)\.xml", lambda t: t == f"{{{W}}}p", lambda t: t == f"{{{W}}}t",
                lambda t: t in (f"{{{W}}}tab", f"{{{W}}}br"), lambda t: False, False)
    if name.endswith(".pptx"):
        return (r"ppt/slides/slide\d+\.xml", lambda t: t == f"{{{A}}}p", lambda t: t == f"{{{A}}}t",
                lambda t: t == f"{{{A}}}br", lambda t: False, False)
    if name.endswith(".epub"):
        blocks = {f"{{{XHTML}}}{b}" for b in "p h1 h2 h3 h4 h5 h6 li td th dt dd caption figcaption title div".split()}
        skipped = {f"{{{XHTML}}}{b}" for b in "script style code kbd samp var".split()}
        return (r"OEBPS/ch1\.xhtml", lambda t: t in blocks, lambda t: True, lambda t: t == f"{{{XHTML}}}br",
                lambda t: t in skipped, True)
    return (r"content\.xml", lambda t: t in (f"{{{TEXT}}}p", f"{{{TEXT}}}h"), lambda t: True,
            lambda t: t in (f"{{{TEXT}}}s", f"{{{TEXT}}}tab", f"{{{TEXT}}}line-break"),
            lambda t: t == f"{{{TEXT}}}note-citation", True)


def check_srt(orig, got, src, out):
    def cues(path):
        text = open(path, "rb").read().decode("utf-8")
        return [c.split("\n") for c in text.replace("\r\n", "\n").lstrip("\ufeff").strip("\n").split("\n\n")]
    raw = open(got, "rb").read()
    assert not raw.startswith(b"\xef\xbb\xbf") and b"\r\n" in raw and b"\n\n" not in raw.replace(b"\r\n", b"\n").rstrip()[:0]
    a, b = cues(orig), cues(got)
    assert len(a) == len(b) and all(x[:2] == y[:2] for x, y in zip(a, b)), (a, b)
    open(src, "w").write("".join(" ".join(x[2:]) + "\n" for x in a))
    open(out, "w").write("".join("|".join(y[2:]) + "\n" for y in b))


def check(orig, got, src, out):
    if orig.endswith(".srt"):
        return check_srt(orig, got, src, out)
    za, zb = zipfile.ZipFile(orig), zipfile.ZipFile(got)
    assert zb.testzip() is None
    ia, ib = za.infolist(), zb.infolist()
    assert [i.filename for i in ia] == [i.filename for i in ib], ([i.filename for i in ia], [i.filename for i in ib])
    assert [i.compress_type for i in ia] == [i.compress_type for i in ib]
    if ia[0].filename == "mimetype":
        assert ib[0].compress_type == zipfile.ZIP_STORED and zb.read("mimetype") == za.read("mimetype")
    pattern, is_p, is_t, is_s, is_skip, all_text = rules(orig)
    sources, targets = [], []
    for i in ia:
        a, b = za.read(i.filename), zb.read(i.filename)
        if not re.fullmatch(pattern, i.filename):
            assert a == b, f"{i.filename} changed"
            continue
        ra, rb = ET.fromstring(a), ET.fromstring(b)  # well-formed, or it raises
        assert b.startswith(a[:a.index(b"?>") + 2]), f"{i.filename}: the XML declaration changed"
        assert [e.tag for e in ra.iter()] == [e.tag for e in rb.iter()], f"{i.filename}: the elements changed"
        instr = f"{{{W}}}instrText"
        assert [e.text for e in ra.iter(instr)] == [e.text for e in rb.iter(instr)], "field codes changed"
        sources += paragraphs(ra, is_p, is_t, is_s, is_skip, all_text)
        targets += [collapse(t) for t in paragraphs(rb, is_p, is_t, is_s, is_skip, all_text)]
    open(src, "w").write("".join(t + "\n" for t in sources))
    open(out, "w").write("".join(t + "\n" for t in targets))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(*sys.argv[2:6])
