"""Build the compiled hot path (Cython) next to its pure-Python twin.

Set AIOKAFKA_LITE_NO_EXT=1 to skip the extension (the pure-Python twin is then used).
"""
import glob
import os

from setuptools import setup

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

setup(ext_modules=ext_modules)
