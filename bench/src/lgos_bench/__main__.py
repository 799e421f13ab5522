"""``python -m lgos_bench``: the same as ``lgos-bench``."""

import sys

from lgos_bench.cli import main

sys.exit(main())
