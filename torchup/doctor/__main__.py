"""``python -m torchup.doctor [options]``"""

import sys

from torchup.doctor import main

sys.exit(main())
