"""Stands in for the ``cython`` module where a one-source compiled module (``producer/_send.py``) runs as
Python and Cython is not installed (it is a build dependency only): its ``cython.compiled`` is False."""

compiled = False
