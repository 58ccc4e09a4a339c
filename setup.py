"""Build the compiled hot path (Cython) next to its pure-Python twin.

Set AIOKAFKA_LITE_NO_EXT=1 to skip the extension (the pure-Python twin is then used).
"""
import fcntl
import glob
import os

from setuptools import setup

# `make test` builds the 3.11 and 3.13 venvs at once from one source tree: both builds would write the same
# generated .c files and egg-info. One build at a time runs this script; the second finds the .c files
# up to date and only compiles them for its own interpreter.
_lock = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".setup.lock"), "w")
fcntl.flock(_lock, fcntl.LOCK_EX)

ext_modules = []
if not os.environ.get("AIOKAFKA_LITE_NO_EXT"):
    from Cython.Build import cythonize

    # Modules written once in Python and compiled with an augmenting .pxd (Cython's pure-Python mode).
    one_source = ["aiokafka_lite/producer/_handles.py", "aiokafka_lite/producer/_send.py",
                  "aiokafka_lite/producer/_hash.py"]
    sources = sorted(glob.glob("aiokafka_lite/**/*.pyx", recursive=True)) + one_source
    if sources:
        ext_modules = cythonize(
            sources,
            language_level=3,
            compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
        )

try:
    setup(ext_modules=ext_modules)
finally:
    fcntl.flock(_lock, fcntl.LOCK_UN)
    _lock.close()
