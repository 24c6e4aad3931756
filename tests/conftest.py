"""The suite converts and traces every function afresh: the disk caches (of converted
source, autograph.source.disk_cache, and of traces, autograph.trace_cache) are off, so no
run depends on an earlier one and nothing is written into the user's cache directory.
tests/source/test_disk_cache.py and tests/function/test_trace_cache.py turn them on in a
temporary directory.

`AUTOGRAPH_TEST_CACHE_DIR=dir` runs the suite with both caches on in `dir` instead: run it
twice and the second run loads what the first stored (the check that a loaded trace
behaves like a traced one, across the whole suite)."""

import os

os.environ["AUTOGRAPH_CACHE_DIR"] = os.environ.get("AUTOGRAPH_TEST_CACHE_DIR", "off")
