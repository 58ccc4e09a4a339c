"""``python -m protocol_gen [SPEC_DIR] [--out DIR]`` (from ``tools/``), same as ``tools/gen_protocol.py``."""

import sys

from .cli import main

sys.exit(main())
