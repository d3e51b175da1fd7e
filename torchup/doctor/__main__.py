"""``python -m torchup.doctor [options]``"""

from torchup.core.entry import drop_working_directory

drop_working_directory()

import sys  # noqa: E402 (after the working directory left sys.path)

from torchup.doctor import main  # noqa: E402

sys.exit(main())
