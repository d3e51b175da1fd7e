from torchup.core.entry import drop_working_directory

drop_working_directory()

from torchup.cli.main import console  # noqa: E402 (after the working directory left sys.path)

console()
