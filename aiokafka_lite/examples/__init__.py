"""Runnable examples shipped with the package (``python -m aiokafka_lite.examples.produce_consume``)."""
