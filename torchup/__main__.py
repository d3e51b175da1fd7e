import sys

from torchup.cli import main

sys.exit(main())
