"""``python -m lgos_chainlit``: the same as the ``lgos-chainlit`` command."""

import sys

from lgos_chainlit.cli import main

sys.exit(main())
