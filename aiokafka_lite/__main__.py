"""``python -m aiokafka_lite``: the same command line as ``aiokafka-lite``."""

import sys

from aiokafka_lite.cli import main

if __name__ == "__main__":
    sys.exit(main())
