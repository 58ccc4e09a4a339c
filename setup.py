"""Build the compiled hot path (Cython) next to its pure-Python twin.

Set AIOKAFKA_LITE_NO_EXT=1 to skip the extension (the pure-Python twin is then used).
"""
import fcntl
import glob
import os

from setuptools import setup
from setuptools.command.build_ext import build_ext

# `make test` builds the 3.11 and 3.13 venvs at once from one source tree: both builds would write the same
# generated .c files and egg-info. One build at a time runs this script up to its compiling, which writes
# only files named for its own interpreter (the second finds the .c files up to date): the lock is let go
# there, so the 3.11 build that the Spark lane waits for never waits for the other's compiler.
_lock = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".setup.lock"), "w")
fcntl.flock(_lock, fcntl.LOCK_EX)


class _BuildExt(build_ext):
    def build_extensions(self) -> None:
        fcntl.flock(_lock, fcntl.LOCK_UN)
        super().build_extensions()


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
    for ext in ext_modules:
        ext.extra_compile_args.append("-g0")  # debug info costs compile time and serves nothing at run time

try:
    # The modules compile side by side: the records core alone takes longer than the rest together.
    setup(ext_modules=ext_modules, cmdclass={"build_ext": _BuildExt}, options={"build_ext": {"parallel": 2}})
finally:
    fcntl.flock(_lock, fcntl.LOCK_UN)
    _lock.close()
