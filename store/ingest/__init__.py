"""``lca-tui ingest``: find what the paths hold, detect each format, import it.

Formats register in ``FILE_FORMATS`` (line-oriented files, detected from their first JSON
objects) and ``DIR_FORMATS`` (folders with a layout of their own). Bad input never aborts the
batch: each problem is reported with its file, line and reason, and everything else lands.

This package owns every importer and ``reindex``. Memories are written through
``store.core.memories`` only; ACP reuses ``memory_dir``'s public file import. May import:
``store.core``; the export importer also uses ``store.export.extra``'s public restore
functions and ``store.export.verify`` (is each listed file complete), and the memory importers
record supersessions with
``store.governance.chains.sync_links`` (links, status, validity).
"""

from store.ingest.batch import ingest
from store.ingest.registry import DIR_FORMATS, FILE_FORMATS, detect_file, formats

# Where each part lives: ``registry`` (the formats and their detection), ``batch`` (one
# ``ingest`` call: walking the paths, one file's failure never the batch's, the run recorded),
# ``base`` (what every line importer shares: ``LineImporter`` and ``FileImport``, decode a line,
# accept its outcome, flush a batch, finish), one module per format, ``runs`` (the import
# runs and their problems), ``lines`` (reading from a saved position), ``reindex``.
__all__ = ["DIR_FORMATS", "FILE_FORMATS", "detect_file", "formats", "ingest"]
