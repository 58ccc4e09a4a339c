"""Code generator for ``aiokafka_lite/protocol/messages/`` from Kafka's JSON message specs.

Why generate straight-line code per version: interpreting a field table at run time costs several times
more per field than a precompiled ``struct.Struct`` call, and Produce/Fetch/Metadata are on the hot path.

One concern per module: ``spec`` (JSON specs -> model), ``values`` (defaults and type hints of fields),
``layout`` (line wrapping), ``emit_base``/``emit_encoders``/``emit_decoders`` (per-version codec functions),
``emit_classes`` (message classes), ``emit_modules`` (whole files and the index), ``cli`` (``generate``,
``main``). ``tools/gen_protocol.py`` is the entry point and re-exports the names the tests use.
"""
