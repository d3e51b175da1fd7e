"""``python -m torchup.trace script.py args...``"""

from torchup.core.entry import drop_working_directory

drop_working_directory()  # (the program gets the sys.path `python script.py` gives it: torchup.trace.main)

import sys  # noqa: E402 (after the working directory left sys.path)

from torchup.trace import main  # noqa: E402

sys.exit(main())
