"""``python -m torchup.trace script.py args...``"""

import sys

from torchup.trace import main

sys.exit(main())
