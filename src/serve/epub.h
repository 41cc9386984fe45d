/* epub: an EPUB's chapters, in reading order: META-INF/container.xml names the package document (its
 * first rootfile's full-path), whose manifest items (id, href relative to the package document,
 * media-type) the spine lists by idref. A chapter is a spine item that is XHTML (application/xhtml+xml,
 * or named .xhtml, .html or .htm) and lies in the archive (its href taken as written, relative to the
 * package document, its #fragment cut: no "../" or %-escapes resolved; one not found is left out); each
 * is listed once. Element names may carry a prefix (opf:item). A missing container or package
 * document, or a spine that names no item, is refused with the file's name.
 */
#ifndef NMT_SERVE_EPUB_H
#define NMT_SERVE_EPUB_H

#include "base/zip_mem.h"

/* Writes the chapters' entry indices to chapters[0, *count) (room for zip->count); errors begin with
 * `file`. */
int nmt_serve_epub_chapters(const nmt_zip_mem *zip, const char *file, int *chapters, int *count);

#endif
