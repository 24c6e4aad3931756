"""The suite converts every function afresh: the disk cache of converted source
(autograph.source.disk_cache) is off, so no run depends on an earlier one and nothing is
written into the user's cache directory. tests/source/test_disk_cache.py turns it on in a
temporary directory."""

import os

os.environ["AUTOGRAPH_CACHE_DIR"] = "off"
